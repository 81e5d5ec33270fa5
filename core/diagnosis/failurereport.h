// SPDX-License-Identifier: GPL-3.0-or-later
//
// The failure report of a run: which rank failed first (the root cause) and how, with its
// symbolized stack, then every other rank and why it stopped. Value types only; the run
// controller collects RankFailure values as it observes them and calls FailureReport::build().
// The stack lines are the worker's frame format (docs/crash-reports.md):
//   #3 0x000055d0c1a2b3c4 in ns::f(int) at /src/worker/x.cpp:42 [rankdeck-worker]
#pragma once

#include "stream/pythontraceback.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

namespace rankdeck {

// A process the rank started that died and took the rank down with it: a DataLoader worker
// whose Dataset segfaulted (the rank itself then raises "DataLoader worker (pid(s) N) exited
// unexpectedly"; issue 27). What the rank's chained traceback said of it; its faulthandler dump,
// written to the stderr it shares with the rank, is the failure's pythonDump.
struct ChildFailure
{
    qint64 pid = 0; // 0: not known (only the child's own crash dump named it)
    QString role;   // "DataLoader worker"
    int signal = 0; // what killed it; 0 when it exited
    QString signalName;
    int exitCode = 0;

    bool isEmpty() const { return role.isEmpty(); }
    bool operator==(const ChildFailure &other) const = default;
    QJsonObject toJson() const;
    static ChildFailure fromJson(const QJsonObject &json);
    // "DataLoader worker (pid 4242)", or "a DataLoader worker" when its pid is not known
    QString who() const;
    // "SIGSEGV (signal 11) in DataLoader worker (pid 4242)", "exit code 3 in …"
    QString summary() const;
};

struct RankFailure
{
    int rank = -1;
    QString host;
    int localRank = -1;
    // When it failed, µs since the epoch, on the launcher's clock: a rank's own timestamp has
    // its node's clock offset (clockOffsetUs, node − launcher) taken off.
    qint64 timeUs = 0;
    qint64 clockOffsetUs = 0;
    // "crash" (fatal signal, reported by the worker), "exception" (uncaught, reported by the
    // worker), "error" (the worker's error event), "exit" (non-zero exit, nothing reported),
    // "signal" (killed by a signal, nothing reported), "lost" (connection/process lost),
    // "hang" (no progress), "consequence" (stopped because another rank failed), "collective"
    // (named by the flight recorder: its collective differs from the others', or the others
    // wait in one it never entered; message: the verdict's headline, then its text).
    QString kind;
    int exitCode = 0;
    int signal = 0;
    QString signalName;    // "SIGSEGV"
    QString exceptionType; // "c10::Error"
    QString message;
    QStringList stack;      // innermost frame first
    int firstOwnFrame = -1; // index into stack of the first frame of the worker's own code
    QString reason;         // why it stopped, for ranks that are not the root cause
    bool rootCause = false;
    // Extra detail from a crash event.
    qint64 pid = 0;
    QString thread;
    QString buildId;
    QString reportPath; // crash-rank<R>.txt on the rank's node
    // A Python program's side (pythonfailure.h: mergePython()): the traceback chain that ended
    // it (printed order), and its Python stacks at a fatal signal (faulthandler).
    QList<PythonException> python;
    PythonFaultDump pythonDump;
    ChildFailure child; // pythonfailure.h: mergePython() finds it in the traceback

    bool operator==(const RankFailure &other) const = default;

    QJsonObject toJson() const;
    static RankFailure fromJson(const QJsonObject &json);
    // One line: "SIGSEGV (signal 11)", "uncaught c10::Error", "ValueError: bad batch" (a
    // Python exception), "exit code 3", "SIGSEGV (signal 11) in DataLoader worker (pid 42) of
    // rank 1" (a child's death that ended the rank), …
    QString summary() const;
    // A child's death (a DataLoader worker's) ended the rank: its own exception, or its exit
    // with no traceback, only followed from it.
    bool endedByChild() const;
};

// Ranks that failed the same way, shown as one entry (failuregrouping.h says what "the same"
// is).
struct FailureGroup
{
    QList<int> ranks;           // ascending
    RankFailure representative; // the first of them in the report's order (the earliest)
    // Other ranks that died as the root cause did (failuregrouping.h: sameAsRootCause()).
    bool sameAsRoot = false;
};

struct FailureReport
{
    QList<RankFailure> failures; // root cause first, then the others by time

    // The root cause is the earliest failure by timeUs that is not a consequence (ties: the
    // lower rank); when all are consequences, the earliest of all. One entry per rank: several
    // observations of one rank (its crash event, then its exit status) are merged.
    static FailureReport build(QList<RankFailure> observed);

    bool isEmpty() const { return failures.isEmpty(); }
    const RankFailure *rootCause() const;
    // The failures with ranks that failed the same way merged: the root cause alone first,
    // then the others in the report's order, each group where its earliest rank stands.
    // (Defined in failuregrouping.cpp.)
    QList<FailureGroup> groups() const;

    // For people (the CLI's `show`, failure.txt): root cause first with its Python traceback
    // (as Python prints it, "→" on the innermost frame of the user's own code) and its native
    // stack (the first frame of the worker's own code marked), then each group of other ranks
    // ("ranks 1–199: same traceback as rank 1"), why they stopped, with their time relative to
    // the root cause.
    QString toText() const;
    QJsonObject toJson() const;
    static FailureReport fromJson(const QJsonObject &json);
};

// A `crash` event's JSON object (the whole event, or just its fields) as a RankFailure:
// kind "crash" for a signal, "exception" for an uncaught exception; rank and timeUs from the
// event's "rank" and "ts" when present.
RankFailure failureFromCrashEvent(const QJsonObject &event);

// The crash-rank<R>.txt file a worker leaves in its run directory: its last line is the crash
// event, so a report survives a lost connection. Returns a failure with kind empty when the
// file holds no valid event.
RankFailure failureFromCrashReportFile(const QByteArray &contents);

struct ThreadStack
{
    qint64 tid = 0;
    QString name; // thread name, without the ", main thread" mark
    bool mainThread = false;
    QStringList frames; // innermost first
    QString note;       // why there are no frames ("the thread blocks signals")
};

// The `stack` field of a `stacks` event: blocks of frames under "thread N (name):" headers.
QList<ThreadStack> parseThreadStacks(const QString &stacksText);
// Same, from the whole event object.
QList<ThreadStack> threadStacksFromEvent(const QJsonObject &event);

// Index of the first frame of the worker's own code: a frame in the module ownModule
// ("rankdeck-worker", or a deployed "rankdeck-worker-<hash>") that is not the crash handler or
// inlined standard-library code; -1 if none.
int firstOwnFrame(const QStringList &stack,
                  const QString &ownModule = QStringLiteral("rankdeck-worker"));

// Where a (hung) thread waits, for one line in a table: the innermost frame that is a
// collective or wait in c10d/gloo/NCCL, else the first own frame, else the innermost named one.
// Returns the function name only ("c10d::ProcessGroupGloo::AsyncWork::wait()").
QString waitLocation(const QStringList &frames,
                     const QString &ownModule = QStringLiteral("rankdeck-worker"));

// True when the frames show the thread blocked in a collective (waiting for its peers).
bool waitsInCollective(const QStringList &frames);

// "SIGSEGV" for 11; empty for a number without a name here.
QString signalNameForNumber(int signal);

// Parts of one frame line; empty strings for what the line does not have.
struct FrameParts
{
    int index = -1;
    QString pc;
    QString function;
    QString file;
    int line = 0;
    QString module;
    bool inlined = false;
};
FrameParts parseFrame(const QString &frameLine);

} // namespace rankdeck
