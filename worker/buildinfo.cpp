// SPDX-License-Identifier: GPL-3.0-or-later
#include "buildinfo.h"

#include <torch/headeronly/version.h>

#include <cstdint>
#include <cstring>
#include <elf.h>
#include <fstream>
#include <link.h>

#ifndef RANKDECK_VERSION
#define RANKDECK_VERSION "unknown"
#endif

namespace rankdeck::buildinfo {

std::string workerVersion()
{
    return RANKDECK_VERSION;
}

std::string torchVersion()
{
    return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "."
        + std::to_string(TORCH_VERSION_PATCH);
}

namespace {
int findBuildId(struct dl_phdr_info *info, size_t, void *data)
{
    auto *out = static_cast<std::string *>(data);
    // The first object reported is the main executable.
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const auto &ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_NOTE)
            continue;
        const char *p = reinterpret_cast<const char *>(info->dlpi_addr + ph.p_vaddr);
        const char *end = p + ph.p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const auto *note = reinterpret_cast<const ElfW(Nhdr) *>(p);
            const char *name = p + sizeof(ElfW(Nhdr));
            const char *desc = name + ((note->n_namesz + 3) & ~3u);
            if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
                static constexpr char hex[] = "0123456789abcdef";
                for (unsigned k = 0; k < note->n_descsz; ++k) {
                    const auto b = static_cast<unsigned char>(desc[k]);
                    *out += hex[b >> 4];
                    *out += hex[b & 15];
                }
                return 1;
            }
            p = desc + ((note->n_descsz + 3) & ~3u);
        }
    }
    return 1;
}
} // namespace

std::string buildId()
{
    static const std::string id = [] {
        std::string s;
        dl_iterate_phdr(findBuildId, &s);
        if (!s.empty())
            return s;
        // No note (linked without --build-id): FNV-1a of the executable stands in.
        std::ifstream in("/proc/self/exe", std::ios::binary);
        std::uint64_t h = 1469598103934665603ull;
        char buf[65536];
        while (in.read(buf, sizeof buf) || in.gcount() > 0) {
            for (std::streamsize i = 0; i < in.gcount(); ++i)
                h = (h ^ static_cast<unsigned char>(buf[i])) * 1099511628211ull;
        }
        char out[17];
        std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
        return std::string("fnv-") + out;
    }();
    return id;
}

} // namespace rankdeck::buildinfo
