// SPDX-License-Identifier: GPL-3.0-or-later
//
// A Python rank's failure in the report: what its traceback or faulthandler dump (from its
// stderr through PythonFailureScanner, or from the supervisor's error/stacks events and
// torchelastic's error file) adds to what the launcher knew, and how the report prints it.
#pragma once

#include "diagnosis/failurereport.h"
#include "stream/pythontraceback.h"

#include <QList>
#include <QString>

namespace rankdeck {

// Adds a rank's Python side to its failure, keeping what its own events said:
//   - the chain (bounded) and the dump are stored (a non-empty one replaces an older one);
//   - a rank that only exited non-zero or sent an `error` event ("exit", "error", or no kind
//     yet) with a chain becomes kind "exception": it died of an uncaught Python exception;
//   - so does a "consequence" (stopped by the launcher) whose chain reached the module's top
//     level: its own uncaught exception was ending it when the stop came;
//   - the exception type is filled when there was none (not for a fatal signal's "crash");
//   - the message becomes the last exception's message; an earlier, different message (the
//     `error` event's) is kept after it on its own line; a dump gives an empty message
//     "Fatal Python error: …".
// Calling it twice with the same data changes nothing the second time.
//   - a DataLoader worker's death that ended an "exception" rank becomes its `child`: from the
//     chain's messages, else from childDeath (PythonFailureScanner::lastChildDeath());
//   - a rank still a "crash" of SIGABRT after that, with what std::terminate printed
//     (PythonFailureScanner::lastTerminate(): "gloo::EnforceNotMet: … Received data size
//     doesn't match expected size …"), gets those words as its message: the library's own
//     reason, not "python3.11 was killed by SIGABRT".
void mergePython(RankFailure *failure, const QList<PythonException> &chain,
                 const PythonFaultDump &dump = {}, const QString &childDeath = {},
                 const QString &terminate = {});

// "ValueError: bad batch": the last exception, the first line of its message (bounded); empty
// for an empty chain.
QString pythonSummary(const QList<PythonException> &chain);

// The Python block of FailureReport::toText() for one rank, every line prefixed with indent:
// the traceback as Python prints it ("→" on the innermost frame of the user's own code), then
// the faulthandler dump. Empty when the failure has neither.
QString pythonFailureText(const RankFailure &failure, const QString &indent);

} // namespace rankdeck
