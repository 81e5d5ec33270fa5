// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/pythonfailure.h"

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

// Whether a fatal signal came after `chain` had ended the program: the exception reached the
// module's top level (uncaught), and at the signal no thread ran Python code any more.
bool diedExitingAfter(const QList<PythonException> &chain, const PythonFaultDump &dump)
{
    const QList<PythonFrame> &frames = chain.last().frames;
    // The module's frame is the outermost one (which end that is depends on the source).
    const auto isModule = [](const PythonFrame &f) {
        return f.function == QLatin1String("<module>");
    };
    if (frames.isEmpty() || !(isModule(frames.first()) || isModule(frames.last())))
        return false;
    if (dump.fatalError.isEmpty() || dump.threads.isEmpty())
        return false;
    return std::all_of(dump.threads.cbegin(), dump.threads.cend(),
                       [](const PythonThreadStack &t) { return t.frames.isEmpty(); });
}

} // namespace

void mergePython(RankFailure *failure, const QList<PythonException> &chain,
                 const PythonFaultDump &dump)
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
        const QString what = f.pythonDump.fatalError.isEmpty()
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
