// SPDX-License-Identifier: GPL-3.0-or-later
#include "crash/stackdump.h"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <unordered_map>

namespace rankdeck::crash {

namespace {

// Template-heavy libtorch names can run to kilobytes; a frame line stays readable.
constexpr std::size_t kMaxFunctionName = 400;

std::string demangle(const char *name)
{
    if (!name || !*name)
        return {};
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> out(
        abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
    std::string s = (status == 0 && out) ? std::string(out.get()) : std::string(name);
    if (s.size() > kMaxFunctionName)
        s = s.substr(0, kMaxFunctionName) + "…";
    return s;
}

std::string baseName(const char *path)
{
    if (!path)
        return {};
    const char *slash = std::strrchr(path, '/');
    return slash ? slash + 1 : path;
}

std::string dieFunctionName(Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    for (int at : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
        if (dwarf_attr_integrate(die, at, &attr)) {
            if (const char *linkage = dwarf_formstring(&attr))
                return demangle(linkage);
        }
    }
    const char *name = dwarf_diename(die);
    return name ? std::string(name) : std::string();
}

constexpr std::string_view kDeleted = " (deleted)";

std::string withoutDeleted(std::string name)
{
    if (name.size() > kDeleted.size() &&
        name.compare(name.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0)
        name.resize(name.size() - kDeleted.size());
    return name;
}

// "/proc/self/exe" or "/proc/<pid>/exe" for the process being symbolized.
std::string exeLink(pid_t pid)
{
    return pid == ::getpid() ? std::string("/proc/self/exe")
                             : "/proc/" + std::to_string(pid) + "/exe";
}

// Which process findElf works for: libdwfl's callback has no argument of ours, and one
// symbolizer is used by one thread at a time.
thread_local pid_t t_findElfPid = 0;

// A binary replaced on disk while it runs (a redeploy, a rebuild) shows in the maps as
// "path (deleted)"; the running image is still reachable through /proc/<pid>/exe.
int findElf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
            char **fileName, Elf **elfp)
{
    const std::string_view name = modname ? modname : "";
    if (name.size() > kDeleted.size() && name.substr(name.size() - kDeleted.size()) == kDeleted) {
        const std::string link = exeLink(t_findElfPid > 0 ? t_findElfPid : ::getpid());
        char exe[4096];
        const ssize_t n = ::readlink(link.c_str(), exe, sizeof exe - 1);
        if (n > 0 && name == std::string_view(exe, static_cast<std::size_t>(n))) {
            const int fd = ::open(link.c_str(), O_RDONLY | O_CLOEXEC);
            if (fd >= 0) {
                *fileName = ::strdup(link.c_str());
                return fd;
            }
        }
    }
    return dwfl_linux_proc_find_elf(mod, userdata, modname, base, fileName, elfp);
}

} // namespace

struct StackSymbolizer::Impl
{
    Dwfl *dwfl = nullptr;
    std::string exePath;
    char *debuginfoPath = nullptr;
    Dwfl_Callbacks callbacks{};
    // Each module's compile units, read once, for modules without .debug_aranges.
    std::unordered_map<Dwfl_Module *, std::vector<Dwarf_Die>> unitsByModule;

    // The compile unit holding `lookup`. libdw (before elfutils 0.191) finds it only through
    // .debug_aranges, which clang does not emit unless asked (-gdwarf-aranges), so a user's
    // clang-built program would show no file:line at all; then each unit's own ranges decide.
    Dwarf_Die *unitDie(Dwfl_Module *mod, Dwarf_Addr lookup, Dwarf_Addr *bias, Dwarf_Die *found)
    {
        if (Dwarf_Die *cu = dwfl_module_addrdie(mod, lookup, bias))
            return cu;
        Dwarf *dwarf = dwfl_module_getdwarf(mod, bias);
        if (!dwarf)
            return nullptr;
        auto [it, fresh] = unitsByModule.try_emplace(mod);
        if (fresh) {
            Dwarf_CU *unit = nullptr;
            Dwarf_Half version = 0;
            std::uint8_t unitType = 0;
            Dwarf_Die cuDie;
            while (dwarf_get_units(dwarf, unit, &unit, &version, &unitType, &cuDie, nullptr) == 0) {
                if (unitType == DW_UT_compile || unitType == DW_UT_partial)
                    it->second.push_back(cuDie);
            }
        }
        for (Dwarf_Die &cu : it->second) {
            if (dwarf_haspc(&cu, lookup - *bias) == 1) {
                *found = cu;
                return found;
            }
        }
        return nullptr;
    }

    void expand(std::vector<StackFrame> &out, std::uintptr_t pc, Dwarf_Addr lookup)
    {
        StackFrame frame;
        frame.pc = pc;
        Dwfl_Module *mod = dwfl ? dwfl_addrmodule(dwfl, lookup) : nullptr;
        if (!mod) {
            out.push_back(frame);
            return;
        }
        Dwarf_Addr start = 0;
        const char *mainFile = nullptr;
        const char *modName =
            dwfl_module_info(mod, nullptr, &start, nullptr, nullptr, nullptr, &mainFile, nullptr);
        frame.module =
            baseName(withoutDeleted(modName ? modName : (mainFile ? mainFile : "")).c_str());
        frame.moduleOffset = pc - start;
        // Module names are the paths from /proc/self/maps; the main file is only known once
        // libdw has opened the ELF, so compare both.
        frame.own = (modName && exePath == modName) || (mainFile && exePath == mainFile);

        GElf_Off offset = 0;
        GElf_Sym sym;
        if (const char *symName =
                dwfl_module_addrinfo(mod, lookup, &offset, &sym, nullptr, nullptr, nullptr)) {
            // "__libc_start_main@@GLIBC_2.34": the symbol version is noise in a stack.
            std::string name = symName;
            if (const std::size_t at = name.find('@'); at != std::string::npos && at > 0)
                name.resize(at);
            frame.function = demangle(name.c_str());
        }

        Dwarf_Addr bias = 0;
        Dwarf_Die cuFound;
        Dwarf_Die *cu = unitDie(mod, lookup, &bias, &cuFound);
        if (Dwfl_Line *line = dwfl_module_getsrc(mod, lookup)) {
            int lineNo = 0;
            if (const char *file =
                    dwfl_lineinfo(line, nullptr, &lineNo, nullptr, nullptr, nullptr)) {
                frame.file = file;
                frame.line = lineNo;
            }
        } else if (Dwarf_Line *unitLine = cu ? dwarf_getsrc_die(cu, lookup - bias) : nullptr) {
            int lineNo = 0;
            if (const char *file = dwarf_linesrc(unitLine, nullptr, nullptr)) {
                frame.file = file;
                frame.line = dwarf_lineno(unitLine, &lineNo) == 0 ? lineNo : 0;
            }
        }

        // Inlined calls: the line table gives the innermost inlined body's line; the DWARF
        // scopes give each inlined function and the line it was called from.
        Dwarf_Die *scopes = nullptr;
        const int nScopes = cu ? dwarf_getscopes(cu, lookup - bias, &scopes) : 0;
        Dwarf_Files *files = nullptr;
        std::size_t nFiles = 0;
        if (nScopes > 0 && dwarf_getsrcfiles(cu, &files, &nFiles) == 0) {
            std::string file = frame.file;
            int lineNo = frame.line;
            for (int i = 0; i < nScopes; ++i) {
                const int tag = dwarf_tag(&scopes[i]);
                if (tag == DW_TAG_subprogram)
                    break;
                if (tag != DW_TAG_inlined_subroutine)
                    continue;
                StackFrame inl = frame;
                inl.inlined = true;
                inl.function = dieFunctionName(&scopes[i]);
                inl.file = file;
                inl.line = lineNo;
                out.push_back(inl);
                // The call site is where the caller's frame stands.
                Dwarf_Attribute attr;
                Dwarf_Word callFile = 0, callLine = 0;
                if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &attr), &callFile) ==
                        0 &&
                    callFile < nFiles) {
                    const char *f = dwarf_filesrc(files, callFile, nullptr, nullptr);
                    file = f ? f : "";
                }
                lineNo =
                    dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr), &callLine) == 0
                        ? static_cast<int>(callLine)
                        : 0;
            }
            frame.file = file;
            frame.line = lineNo;
        }
        std::free(scopes);
        out.push_back(frame);
    }
};

StackSymbolizer::StackSymbolizer() : StackSymbolizer(::getpid()) {}

StackSymbolizer::StackSymbolizer(pid_t pid) : m_impl(new Impl)
{
    t_findElfPid = pid;
    char exe[4096];
    const ssize_t n = ::readlink(exeLink(pid).c_str(), exe, sizeof exe - 1);
    if (n > 0)
        m_impl->exePath.assign(exe, static_cast<std::size_t>(n));
    m_impl->callbacks.find_elf = findElf;
    m_impl->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
    m_impl->callbacks.debuginfo_path = &m_impl->debuginfoPath;
    m_impl->dwfl = dwfl_begin(&m_impl->callbacks);
    if (m_impl->dwfl) {
        dwfl_report_begin(m_impl->dwfl);
        if (dwfl_linux_proc_report(m_impl->dwfl, pid) != 0) {
            dwfl_end(m_impl->dwfl);
            m_impl->dwfl = nullptr;
        } else {
            dwfl_report_end(m_impl->dwfl, nullptr, nullptr);
        }
    }
}

StackSymbolizer::~StackSymbolizer()
{
    if (m_impl->dwfl)
        dwfl_end(m_impl->dwfl);
    delete m_impl;
}

::Dwfl *StackSymbolizer::dwfl() const
{
    return m_impl->dwfl;
}

std::vector<StackFrame> StackSymbolizer::symbolize(const void *const *pcs, int count,
                                                   bool firstIsExact)
{
    std::vector<StackFrame> frames;
    frames.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        const auto pc = reinterpret_cast<std::uintptr_t>(pcs[i]);
        if (pc == 0)
            continue;
        // A return address points after the call; the call itself is one byte earlier.
        const Dwarf_Addr lookup = (i == 0 && firstIsExact) ? pc : pc - 1;
        m_impl->expand(frames, pc, lookup);
    }
    return frames;
}

std::string formatFrame(int index, const StackFrame &frame)
{
    char head[64];
    std::snprintf(head, sizeof head, "#%d 0x%016" PRIxPTR " in ", index, frame.pc);
    std::string s = head;
    s += frame.function.empty() ? std::string("??") : frame.function;
    if (frame.inlined)
        s += " (inlined)";
    if (!frame.file.empty()) {
        s += " at ";
        s += frame.file;
        if (frame.line > 0)
            s += ':' + std::to_string(frame.line);
    }
    if (!frame.module.empty()) {
        s += " [";
        s += frame.module;
        if (frame.function.empty()) {
            char off[32];
            std::snprintf(off, sizeof off, "+0x%" PRIxPTR, frame.moduleOffset);
            s += off;
        }
        s += ']';
    }
    return s;
}

std::string formatStack(const std::vector<StackFrame> &frames)
{
    std::string s;
    for (std::size_t i = 0; i < frames.size(); ++i) {
        if (i)
            s += '\n';
        s += formatFrame(static_cast<int>(i), frames[i]);
    }
    return s;
}

int firstOwnFrame(const std::vector<StackFrame> &frames)
{
    for (std::size_t i = 0; i < frames.size(); ++i)
        if (frames[i].own)
            return static_cast<int>(i);
    return -1;
}

} // namespace rankdeck::crash
