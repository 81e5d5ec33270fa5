// SPDX-License-Identifier: GPL-3.0-or-later
#include "diagnosis/pythonfailure.h"

#include <QHash>
#include <QRegularExpression>

#include <algorithm>

#include "util/translation.h"

namespace rankdeck {

namespace {

void appendIndented(QString &out, const QString &text, const QString &indent)
{
    QStringList lines = text.split(QLatin1Char('\n'));
    while (!lines.isEmpty() && lines.last().isEmpty())
        lines.removeLast();
    for (const QString &line : std::as_const(lines))
        out += (line.isEmpty() ? QString() : indent + line) + QLatin1Char('\n');
}

} // namespace

namespace {

// Whether the last exception of `chain` reached the module's top level: uncaught, it ends the
// program (a traceback printed by a handler, or a thread's, stops short of `<module>`).
bool reachedModule(const QList<PythonException> &chain)
{
    const QList<PythonFrame> &frames = chain.last().frames;
    // The module's frame is the outermost one (which end that is depends on the source).
    const auto isModule = [](const PythonFrame &f) {
        return f.function == QLatin1String("<module>");
    };
    return !frames.isEmpty() && (isModule(frames.first()) || isModule(frames.last()));
}

// Whether a fatal signal came after `chain` had ended the program: the exception reached the
// module's top level (uncaught), and at the signal no thread ran Python code any more.
bool diedExitingAfter(const QList<PythonException> &chain, const PythonFaultDump &dump)
{
    if (!reachedModule(chain))
        return false;
    if (dump.fatalError.isEmpty() || dump.threads.isEmpty())
        return false;
    return std::all_of(dump.threads.cbegin(), dump.threads.cend(),
                       [](const PythonThreadStack &t) { return t.frames.isEmpty(); });
}

// glibc's strsignal() texts of the signals a worker dies of; faulthandler's "Fatal Python
// error: <text>" uses the same words for the ones it catches.
int signalOfText(const QString &text)
{
    static const QHash<QString, int> bySignalText{
        {QStringLiteral("Segmentation fault"), 11},
        {QStringLiteral("Aborted"), 6},
        {QStringLiteral("Bus error"), 7},
        {QStringLiteral("Floating point exception"), 8},
        {QStringLiteral("Killed"), 9},
        {QStringLiteral("Illegal instruction"), 4},
        {QStringLiteral("Terminated"), 15},
        {QStringLiteral("Trace/breakpoint trap"), 5},
        {QStringLiteral("Bad system call"), 31},
        {QStringLiteral("Interrupt"), 2},
        {QStringLiteral("Hangup"), 1},
        {QStringLiteral("Broken pipe"), 13},
    };
    return bySignalText.value(text.trimmed(), 0);
}

// The dump was written by a DataLoader worker: its thread runs torch's worker loop.
bool isDataLoaderWorkerDump(const PythonFaultDump &dump)
{
    const PythonThreadStack *t = dump.currentThread();
    if (!t)
        return false;
    return std::ranges::any_of(t->frames, [](const PythonFrame &f) {
        return f.function == QLatin1String("_worker_loop") &&
               f.file.endsWith(QLatin1String("/utils/data/_utils/worker.py"));
    });
}

// What torch's DataLoader says in the rank when a worker dies (its SIGCHLD handler,
// torch/csrc/DataLoader.cpp): "DataLoader worker (pid 42) is killed by signal: Segmentation
// fault." (strsignal's text) or "… (pid 42) exited unexpectedly with exit code 3.". The rank then
// raises "DataLoader worker (pid(s) 42) exited unexpectedly" from it.
// When the rank tripped over the dead worker before torch noticed the death (unpickling a batch
// whose tensor the worker shares by file descriptor: "ConnectionResetError: [Errno 104]",
// issue 27, one run in two with two busy loops beside it), nothing in the rank names the worker;
// the worker's own faulthandler dump on the stderr they share says what killed it (not its pid).
ChildFailure dataLoaderWorkerDeath(const QList<PythonException> &chain, const QString &childDeath,
                                   const PythonFaultDump &dump)
{
    static const QRegularExpression killed(QStringLiteral(
        R"(DataLoader worker \(pid (\d+)\) (?:is killed by signal: ([^.\n]+)|exited unexpectedly with exit code (\d+)))"));
    ChildFailure c;
    QStringList texts;
    for (const PythonException &e : chain)
        texts << e.message;
    texts << childDeath;
    for (const QString &text : std::as_const(texts)) {
        const QRegularExpressionMatch m = killed.match(text);
        if (!m.hasMatch())
            continue;
        c.pid = m.captured(1).toLongLong();
        c.role = QStringLiteral("DataLoader worker");
        if (m.capturedLength(2) > 0) {
            c.signal = signalOfText(m.captured(2));
            c.signalName = signalNameForNumber(c.signal);
            if (c.signal == 0)
                c.signalName = m.captured(2).trimmed().left(40); // a text we do not know
        } else {
            c.exitCode = m.captured(3).toInt();
        }
        return c;
    }
    if (const int sig = signalOfText(dump.fatalError); sig != 0 && isDataLoaderWorkerDump(dump)) {
        c.role = QStringLiteral("DataLoader worker");
        c.signal = sig;
        c.signalName = signalNameForNumber(sig);
    }
    return c;
}

} // namespace

void mergePython(RankFailure *failure, const QList<PythonException> &chain,
                 const PythonFaultDump &dump, const QString &childDeath, const QString &terminate)
{
    if (!failure)
        return;
    RankFailure &f = *failure;
    if (!chain.isEmpty() && f.kind == QLatin1String("crash") && diedExitingAfter(chain, dump)) {
        // The exception ended the program; the signal came while the interpreter shut down
        // (torch's threads can abort there). The exception is the cause; the signal stays in
        // the failure's signal fields.
        f.kind = QStringLiteral("exception");
        f.exceptionType = chain.last().type;
        f.message = chain.last().message;
    }
    if (!chain.isEmpty() && f.kind == QLatin1String("consequence") && f.reason.isEmpty() &&
        reachedModule(chain)) {
        // Its own uncaught exception was ending it when the launcher's stop came (issue 27: a
        // rank's KeyError overtaken by the stop's SIGTERM was listed as "stopped"): a failure
        // of its own, whose signal stays in the signal fields. (A peer's echo — Gloo's closed
        // connection — is made a consequence again by the policy, with its reason.)
        f.kind = QStringLiteral("exception");
        f.exceptionType.clear();
        f.message.clear();
    }
    if (!chain.isEmpty()) {
        f.python = chain.mid(qMax<qsizetype>(0, chain.size() - pythonlimits::MaxChain));
        const PythonException &last = chain.last();
        const bool onlyExited =
            f.kind.isEmpty() || f.kind == QLatin1String("exit") || f.kind == QLatin1String("error");
        if (onlyExited)
            f.kind = QStringLiteral("exception");
        if (f.exceptionType.isEmpty() && f.kind != QLatin1String("crash"))
            f.exceptionType = last.type;
        // The supervisor's "python exited with code 1" says nothing the exit code does not:
        // the exception's message replaces it; any other earlier message stays after it.
        static const QRegularExpression plainExit(QStringLiteral("^\\S+ exited with code -?\\d+$"));
        if (f.message.isEmpty() || (onlyExited && plainExit.match(f.message).hasMatch()))
            f.message = last.message;
        else if (onlyExited && !last.message.isEmpty() && !f.message.contains(last.message))
            f.message = last.message + QLatin1Char('\n') + f.message;
    }
    // A rank that exited non-zero with no traceback of its own (it can end without printing one:
    // the tst_frameworks transformers row under load, once in CI) but whose DataLoader worker died
    // said why in the worker's dump or torch's line: that death is still what ended it.
    const bool exitedNonZero =
        (f.kind.isEmpty() || f.kind == QLatin1String("exit") || f.kind == QLatin1String("error")) &&
        f.exitCode != 0;
    if ((f.kind == QLatin1String("exception") || exitedNonZero) && f.child.isEmpty())
        f.child = dataLoaderWorkerDeath(chain, childDeath, dump);
    // Only what a kill says anyway ("python3.11 was killed by SIGABRT") gives way to it.
    static const QRegularExpression killedBy(QStringLiteral("^\\S+ was killed by SIG\\w+$"));
    if (!terminate.isEmpty() && f.kind == QLatin1String("crash") && f.signal == 6 &&
        (f.message.isEmpty() || killedBy.match(f.message).hasMatch()))
        f.message = terminate;
    if (!dump.isEmpty()) {
        f.pythonDump = dump;
        if (f.message.isEmpty() && !dump.fatalError.isEmpty())
            f.message = QStringLiteral("Fatal Python error: ") + dump.fatalError;
    }
}

QString pythonSummary(const QList<PythonException> &chain)
{
    if (chain.isEmpty())
        return {};
    const PythonException &last = chain.last();
    constexpr qsizetype kMax = 200;
    QString message = last.message.section(QLatin1Char('\n'), 0, 0);
    if (message.size() > kMax)
        message = message.left(kMax) + QStringLiteral("…");
    if (last.type.isEmpty())
        return message;
    return message.isEmpty() ? last.type : last.type + QStringLiteral(": ") + message;
}

QString pythonFailureText(const RankFailure &f, const QString &indent)
{
    QString out;
    if (!f.python.isEmpty()) {
        const bool marked = innermostUserFrame(f.python.last().frames) >= 0;
        out += indent + (marked ? tr("Python traceback (→ marks the innermost frame of your own "
                                     "code):\n")
                                : tr("Python traceback:\n"));
        appendIndented(out, formatPythonTraceback(f.python, true), indent + QStringLiteral("  "));
    }
    if (!f.pythonDump.isEmpty()) {
        const PythonThreadStack *current = f.pythonDump.currentThread();
        const bool marked = current && innermostUserFrame(current->frames) >= 0;
        // A DataLoader worker shares the rank's stderr: its dump at its own fatal signal is
        // what the rank printed last, and it names the Dataset's line.
        const QString what =
            !f.child.isEmpty() && isDataLoaderWorkerDump(f.pythonDump)
                ? tr("Python stacks of %1 at its fatal error (faulthandler)").arg(f.child.who())
            : f.pythonDump.fatalError.isEmpty()
                ? tr("Python stacks (faulthandler)")
                : tr("Python stacks at the fatal error (faulthandler)");
        out += indent + what +
               (marked ? tr(" (→ marks the innermost frame of your own code):\n")
                       : QStringLiteral(":\n"));
        appendIndented(out, formatFaultDump(f.pythonDump, true), indent + QStringLiteral("  "));
    }
    return out;
}

} // namespace rankdeck
