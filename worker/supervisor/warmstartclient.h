// SPDX-License-Identifier: GPL-3.0-or-later
//
// Warm start of a Python program (launch --exec --warm): the supervisor's side of the warm
// server (python/rankdeck/_warmstart.py), a per-node, per-user Python that imported torch
// before the launch and forks a rank from that state instead of starting a fresh interpreter.
//   - Only `PYTHON [-u] [-B] SCRIPT ARGS…` and `PYTHON [-u] [-B] -m MODULE ARGS…` start warm
//     (PYTHON: an executable named python*); anything else starts cold, with the reason.
//   - A server is keyed on what changes what an import does: the interpreter (its path, the file
//     it resolves to, that file's mtime and size), the preload modules, the embedded Python
//     files, and the environment variables in kKeyVariables; its socket lives in a private
//     directory (0700, owned by us): $XDG_RUNTIME_DIR/rankdeck-warm, else
//     /tmp/rankdeck-<uid>/warm. A lock file held by the server says one is running or starting.
//   - start() sends the request (argv, environment, working directory, and /dev/null, stdout,
//     stderr as descriptors) and returns the rank's pid, stopped before the script until go():
//     the supervisor traces it first, as it does a cold child between fork and exec.
//   - No server: start() starts one (detached: its own session, not the supervisor's child) and
//     returns false, so this launch starts cold and later ones are warm.
//   - The server's waiter for this rank is a child subreaper: signalTree() reaches every process
//     the rank started, setsid or not, and its exit report comes once that subtree is empty. A
//     closed socket (the supervisor died) makes the waiter stop the subtree itself.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace rankdeck::supervisor {

class WarmStartClient
{
public:
    struct Settings
    {
        std::string runPythonDirectory; // the run's own module directory on PYTHONPATH
        int stopGraceMs = 5000;         // the waiter's SIGTERM → SIGKILL when we are gone
        int slots = 1;                  // ranks this node starts at once (LOCAL_WORLD_SIZE)
    };

    WarmStartClient() = default;
    ~WarmStartClient();
    WarmStartClient(const WarmStartClient &) = delete;
    WarmStartClient &operator=(const WarmStartClient &) = delete;

    // Asks the warm server to fork `command`. true: pid() runs it, waiting for go(). false:
    // start cold, *why says why; *startedServer when this call started the server.
    bool start(const std::vector<std::string> &command, const Settings &settings, std::string *why,
               bool *startedServer);
    pid_t pid() const { return m_pid; }
    // Lets the rank run its script.
    void go();
    // The connection, to poll for readability while the rank runs.
    int fd() const { return m_fd; }
    // After fd() was readable: true once the rank's wait status is known (*status, raw as
    // waitpid's; a waiter that vanished without one counts as killed by SIGKILL).
    bool readExit(int *status);
    // Sends `sig` to the rank and every process below it.
    void signalTree(int sig);

    // The directory the servers' sockets live in (created 0700); empty and *why when unsafe.
    static std::string privateDirectory(std::string *why);

private:
    bool send(const std::string &line);
    void close();

    int m_fd = -1;
    pid_t m_pid = -1;
    std::string m_buffer;
};

} // namespace rankdeck::supervisor
