// SPDX-License-Identifier: GPL-3.0-or-later
#include "crash/buildid.h"

#include <cstring>
#include <elf.h>
#include <link.h>

namespace rankdeck {
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
            if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
                std::memcmp(name, "GNU", 4) == 0) {
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

std::string readGnuBuildId()
{
    std::string id;
    ::dl_iterate_phdr(findBuildId, &id);
    return id;
}

} // namespace rankdeck
