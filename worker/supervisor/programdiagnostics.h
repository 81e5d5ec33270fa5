// SPDX-License-Identifier: GPL-3.0-or-later
//
// What killed a rank of the user's program, and where: everything the supervisor learns about
// the program that only a process on its node can, gathered for the events that
// ProgramSupervisor emits.
//   - native stacks at a fatal signal and on dump-stacks (ProgramTracer, ptrace + libdw);
//   - Python stacks on dump-stacks (PythonStackDumper, faulthandler on a signal of ours), and
//     Python's own crash dump on stderr (PYTHONFAULTHANDLER=1 unless the user set it);
//   - torchelastic's error file (ErrorFile) for the error event;
//   - whether a SIGKILL came from the out-of-memory killer (OomCounter).
#pragma once

#include "supervisor/errorfile.h"
#include "supervisor/oomcounter.h"
#include "supervisor/programtracer.h"
#include "supervisor/pythonstackdumper.h"
#include "wire/wireprotocol.h"

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace rankdeck::supervisor {

class ProgramDiagnostics
{
public:
    // Before the program starts: its environment, stale files of an earlier attempt, the OOM
    // count to compare with.
    void prepare(const std::string &runDirectory, int rank);
    // Between fork and exec: trace the program unless RANKDECK_NO_PTRACE=1; when the kernel
    // refuses, one line on stderr says so and the program runs untraced.
    void attach(pid_t pid);
    // A waitpid(__WALL) result; true when it was a ptrace stop (or thread end) dealt with.
    bool handleStatus(pid_t pid, int status) { return m_tracer.handleStatus(pid, status); }

    // The crash event of a program killed by `sig`: at the time of the signal when it was
    // caught, with the faulting thread's stack; `oom` and the message for an OOM kill.
    wire::WireEventWriter crashEvent(int rank, int sig, const std::string &programName);
    // Adds what the program's error file says (exception, msg, python, error_file) to the
    // error event of a program that exited non-zero; false when it said nothing.
    bool addErrorFields(wire::WireEventWriter &event) const;

    // dump-stacks: the `stacks` event (Python dump first, then every native thread), also
    // written to <run-dir>/stacks-rank<R>.txt. `pump` reaps and handles ptrace stops while it
    // waits, `other` takes waitpid results that are not the tracer's, `gone` says the program
    // died meanwhile.
    wire::WireEventWriter stacksEvent(int rank, const std::string &reason,
                                      const std::function<void()> &pump,
                                      const std::function<void(pid_t, int)> &other,
                                      const std::function<bool()> &gone);

    // A DataLoader worker's crash dump is written into a file of its own
    // (<run-dir>/worker-fault-<rank's python pid>-<worker pid>.txt, by the startup hook), which
    // the rank writes to its stderr whole when the worker ends. What a rank left (it died before
    // it could) is handed to `write` here, each file whole, once the program has ended.
    void handOnWorkerFaults(const std::function<void(std::string_view)> &write);

private:
    bool isPython() const;

    pid_t m_pid = 0;
    std::string m_runDirectory;
    std::string m_stacksPath;
    ProgramTracer m_tracer;
    PythonStackDumper m_python;
    ErrorFile m_errorFile;
    OomCounter m_oom;
    std::int64_t m_oomBefore = -1;
};

} // namespace rankdeck::supervisor
