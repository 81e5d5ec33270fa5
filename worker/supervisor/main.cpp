// SPDX-License-Identifier: GPL-3.0-or-later
// rankdeck-supervisor: one rank of the user's own program (see programsupervisor.h).
#include "supervisor/programsupervisor.h"

#include <cstdio>
#include <string>

int main(int argc, char **argv)
{
    rankdeck::supervisor::SupervisorOptions options;
    std::string error;
    if (!rankdeck::supervisor::parseOptions(argc, argv, &options, &error)) {
        std::fprintf(stderr, "rankdeck-supervisor: %s\n", error.c_str());
        return 2;
    }
    return rankdeck::supervisor::runSupervised(options);
}
