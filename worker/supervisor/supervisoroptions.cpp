// SPDX-License-Identifier: GPL-3.0-or-later
#include "supervisor/supervisoroptions.h"

#include <cstdlib>
#include <string_view>

namespace rankdeck::supervisor {

bool parseOptions(int argc, char **argv, SupervisorOptions *options, std::string *error)
{
    int i = 1;
    for (; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--") {
            ++i;
            break;
        }
        if (a == "--control-stdin") {
            options->controlStdin = true;
        } else if (a == "--warm-python") {
            options->warmPython = true;
        } else if (a == "--no-flight-recorder") {
            options->noFlightRecorder = true;
        } else if ((a == "--run-dir" || a == "--stop-grace-ms" || a == "--tensorboard-dir") &&
                   i + 1 < argc) {
            const std::string value = argv[++i];
            if (a == "--run-dir") {
                options->runDirectory = value;
            } else if (a == "--tensorboard-dir") {
                options->tensorBoardDir = value;
            } else {
                char *end = nullptr;
                const long ms = std::strtol(value.c_str(), &end, 10);
                if (!end || *end || ms < 0) {
                    *error = "--stop-grace-ms needs a number of milliseconds, got '" + value + "'";
                    return false;
                }
                options->stopGraceMs = int(ms);
            }
        } else {
            *error = "unknown option '" + std::string(a) +
                     "' (usage: rankdeck-supervisor [--control-stdin] [--warm-python] "
                     "[--no-flight-recorder] [--run-dir DIR] [--stop-grace-ms MS] "
                     "[--tensorboard-dir DIR] -- PROGRAM [ARGS…])";
            return false;
        }
    }
    for (; i < argc; ++i)
        options->command.emplace_back(argv[i]);
    if (options->command.empty() || options->command.front().empty()) {
        *error = "no program to run: give it after --";
        return false;
    }
    return true;
}

} // namespace rankdeck::supervisor
