// SPDX-License-Identifier: GPL-3.0-or-later
// rankdeck-supervisor's command line (see programsupervisor.h for what it does).
#pragma once

#include <string>
#include <vector>

namespace rankdeck::supervisor {

struct SupervisorOptions
{
    std::vector<std::string> command; // PROGRAM ARGS…
    bool controlStdin = false;        // commands on stdin, its end means the launcher is gone
    int stopGraceMs = 5000;           // SIGTERM → SIGKILL
    std::string runDirectory;         // the rank's run directory on the node (may be empty)
    bool warmPython = false;          // --warm-python: fork a Python program from a warm server
    // Where the program's TensorBoard event files are (EventFileFollower); empty: its --logdir
    // argument, else runs/.
    std::string tensorBoardDir;
    // --no-flight-recorder (or RANKDECK_FLIGHT_RECORDER=0 in the environment): torch's flight
    // recorder stays off unless the user turned it on, and dump-flight-recorder answers why.
    bool noFlightRecorder = false;
};

// Parses the command line; false and *error for a usage error.
bool parseOptions(int argc, char **argv, SupervisorOptions *options, std::string *error);

} // namespace rankdeck::supervisor
