// SPDX-License-Identifier: GPL-3.0-or-later
#include "supervisor/threadunwinder.h"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rankdeck::supervisor {

namespace {

struct Walk
{
    std::vector<void *> pcs;
    int max = 0;
};

int onFrame(Dwfl_Frame *state, void *arg)
{
    auto *walk = static_cast<Walk *>(arg);
    Dwarf_Addr pc = 0;
    bool activation = false;
    if (!dwfl_frame_pc(state, &pc, &activation) || pc == 0)
        return DWARF_CB_ABORT;
    walk->pcs.push_back(reinterpret_cast<void *>(static_cast<std::uintptr_t>(pc)));
    return int(walk->pcs.size()) >= walk->max ? DWARF_CB_ABORT : DWARF_CB_OK;
}

} // namespace

ThreadUnwinder::ThreadUnwinder(pid_t pid) : m_symbolizer(pid)
{
    Dwfl *dwfl = m_symbolizer.dwfl();
    if (!dwfl) {
        m_error = "cannot read the modules of pid " + std::to_string(pid);
        return;
    }
    const int rc = dwfl_linux_proc_attach(dwfl, pid, true);
    if (rc != 0) {
        m_error = rc > 0 ? std::strerror(rc) : dwfl_errmsg(-1);
        return;
    }
    m_attached = true;
}

std::vector<crash::StackFrame> ThreadUnwinder::unwind(pid_t tid, int maxFrames)
{
    if (!m_attached)
        return {};
    Walk walk;
    walk.max = maxFrames;
    // An error at the end of a walk (no CFI for the outermost frame) keeps what was found.
    dwfl_getthread_frames(m_symbolizer.dwfl(), tid, onFrame, &walk);
    return m_symbolizer.symbolize(walk.pcs.data(), int(walk.pcs.size()), true);
}

std::string threadLabel(pid_t pid, pid_t tid)
{
    std::string name;
    const std::string path =
        "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm";
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char buf[64];
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0)
            name.assign(buf, size_t(n));
        ::close(fd);
    }
    while (!name.empty() && name.back() == '\n')
        name.pop_back();
    if (name.empty())
        name = "?";
    return name + " (tid " + std::to_string(tid) + (tid == pid ? ", main thread)" : ")");
}

} // namespace rankdeck::supervisor
