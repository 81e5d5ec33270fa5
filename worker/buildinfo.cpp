// SPDX-License-Identifier: GPL-3.0-or-later
#include "buildinfo.h"
#include "crash/buildid.h"

#include <torch/headeronly/version.h>

#include <cstdint>
#include <cstring>
#include <fstream>

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
    return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
           std::to_string(TORCH_VERSION_PATCH);
}

std::string buildId()
{
    static const std::string id = [] {
        std::string s = readGnuBuildId();
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
