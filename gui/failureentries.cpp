// SPDX-License-Identifier: GPL-3.0-or-later
#include "failureentries.h"

#include "util/translation.h"

#include "diagnosis/collectiveverdict.h"
#include "diagnosis/failuregrouping.h"
#include "diagnosis/failurereport.h"
#include "diagnosis/rankstackdump.h"
#include "diagnosis/stackdumpgroups.h"
#include "record/rankgroups.h"
#include "stream/pythontraceback.h"

#include <QCoreApplication>
#include <QDateTime>

namespace rankdeck {

namespace {

// Rank ranges a title names before it says how many ranks there are in all.
constexpr int kTitlePieces = 8;

QString frameFunction(const QStringList &stack, int index)
{
    if (index < 0 || index >= stack.size())
        return QString();
    return parseFrame(stack[index]).function;
}

// The interpreter's own frames (its eval loop and calls) stand for the Python frames that the
// Python side lists: the native stack is cut there and the Python frames follow.
bool isInterpreterFrame(const FrameParts &p)
{
    return p.module.startsWith(QLatin1String("libpython")) ||
           p.function.startsWith(QLatin1String("_PyEval_")) ||
           p.function.startsWith(QLatin1String("_PyObject_")) ||
           p.function.startsWith(QLatin1String("PyObject_Call"));
}

QList<StackFrameRow> nativeLines(const QStringList &stack, int firstOwn, bool stopAtInterpreter)
{
    QList<StackFrameRow> lines;
    const QString ownModule =
        firstOwn >= 0 && firstOwn < stack.size() ? parseFrame(stack[firstOwn]).module : QString();
    for (int i = 0; i < stack.size(); ++i) {
        const FrameParts p = parseFrame(stack[i]);
        if (stopAtInterpreter && isInterpreterFrame(p)) {
            StackFrameRow cut;
            cut.kind = StackFrameRow::Kind::Note;
            cut.text = tr("    … the interpreter (%1 more native frames) …").arg(stack.size() - i);
            lines << cut;
            break;
        }
        StackFrameRow l;
        l.function = p.function;
        l.file = p.file;
        l.line = p.line;
        l.module = p.module;
        l.text = stack[i];
        l.own = !ownModule.isEmpty() && p.module == ownModule && i >= firstOwn;
        l.marked = i == firstOwn;
        lines << l;
    }
    return lines;
}

QList<StackFrameRow> pythonLines(const QList<PythonFrame> &frames)
{
    QList<StackFrameRow> lines;
    const int mark = innermostUserFrame(frames);
    for (int i = 0; i < frames.size(); ++i) {
        const PythonFrame &f = frames[i];
        StackFrameRow l;
        l.kind = StackFrameRow::Kind::Python;
        l.function = f.function;
        l.file = f.file;
        l.line = f.line;
        l.source = f.source;
        l.own = isUserFile(f.file);
        l.marked = i == mark;
        lines << l;
    }
    return lines;
}

// What a dump said instead of, or besides, a thread's frames ("<no Python frame>"), a row a line.
QList<StackFrameRow> noteLines(const QString &note)
{
    QList<StackFrameRow> lines;
    for (const QString &text : note.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        StackFrameRow l;
        l.kind = StackFrameRow::Kind::Note;
        l.text = text;
        lines << l;
    }
    return lines;
}

QString heading(const QString &text)
{
    return QStringLiteral("<h4>%1</h4>").arg(text.toHtmlEscaped());
}

QString rankTitle(const RankFailure &f)
{
    QString where = f.host.isEmpty() ? QString() : QStringLiteral(" @ %1").arg(f.host);
    return QCoreApplication::translate("rankdeck::FailuresPage", "Rank %1%2")
        .arg(f.rank)
        .arg(where);
}

// What the page shows as one stack, innermost first: for a Python rank, the native frames down
// to the interpreter, then the Python frames of the exception (or of the thread that got the
// fatal signal); for a native program, all its native frames.
QList<StackSection> stackSections(const RankFailure &f)
{
    QList<StackSection> sections;
    const PythonThreadStack *current = f.pythonDump.currentThread();
    const bool python = !f.python.isEmpty() || (current && !current->frames.isEmpty());
    if (python) {
        QList<StackFrameRow> lines = nativeLines(f.stack, -1, true);
        if (!f.python.isEmpty())
            lines += pythonLines(f.python.last().frames);
        else
            lines += pythonLines(current->frames);
        sections << StackSection{
            tr("Stack (innermost first: native, then Python; your own code highlighted)"), lines};
        // The exceptions it was chained from, as Python lists them.
        for (qsizetype i = f.python.size() - 2; i >= 0; --i) {
            const PythonException &e = f.python[i];
            sections << StackSection{tr("Raised while handling: %1: %2").arg(e.type, e.message),
                                     pythonLines(e.frames)};
        }
        if (current) {
            for (const PythonThreadStack &t : f.pythonDump.threads) {
                if (&t == current || t.frames.isEmpty())
                    continue;
                sections << StackSection{tr("Python thread %1").arg(t.threadId),
                                         pythonLines(t.frames)};
            }
        }
    } else if (!f.stack.isEmpty()) {
        sections << StackSection{tr("Stack (innermost first; your own code highlighted)"),
                                 nativeLines(f.stack, f.firstOwnFrame, false)};
    }
    return sections;
}

// "Copy" gives what a user pastes into an issue: the traceback as Python prints it, then the
// native frames.
QString stacksText(const RankFailure &f)
{
    QString text;
    if (!f.python.isEmpty())
        text += formatPythonTraceback(f.python, true) + QLatin1Char('\n');
    if (!f.pythonDump.isEmpty())
        text += formatFaultDump(f.pythonDump, true) + QLatin1Char('\n');
    if (!f.stack.isEmpty())
        text += tr("Native stack (most recent call first):") + QLatin1Char('\n') +
                f.stack.join(QLatin1Char('\n')) + QLatin1Char('\n');
    return text;
}

QString pythonWhere(const RankFailure &f)
{
    QList<PythonFrame> frames;
    if (!f.python.isEmpty())
        frames = f.python.last().frames;
    else if (const PythonThreadStack *t = f.pythonDump.currentThread())
        frames = t->frames;
    const int i = innermostUserFrame(frames);
    if (i < 0)
        return QString();
    return QStringLiteral("%1 (%2:%3)")
        .arg(frames[i].function, frames[i].file.section(QLatin1Char('/'), -1))
        .arg(frames[i].line);
}

QString whereItFailed(const RankFailure &f)
{
    const QString python = pythonWhere(f);
    return python.isEmpty() ? frameFunction(f.stack, f.firstOwnFrame) : python;
}

} // namespace

FailureEntry failureEntry(const RankFailure &f)
{
    FailureEntry e;
    e.rootCause = f.rootCause;
    e.rank = f.rank;
    e.timeUs = f.timeUs;
    e.title = rankTitle(f) + QStringLiteral(" — ") + f.summary();
    if (f.rootCause)
        e.title += QCoreApplication::translate("rankdeck::FailuresPage", " (root cause)");

    const QString when = f.timeUs > 0 ? QDateTime::fromMSecsSinceEpoch(f.timeUs / 1000)
                                            .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz"))
                                      : QString();
    QString html = QStringLiteral("<h3>%1</h3>").arg(e.title.toHtmlEscaped());
    QString text = e.title + QLatin1Char('\n');
    auto row = [&](const QString &label, const QString &value) {
        if (value.isEmpty())
            return;
        html +=
            QStringLiteral("<b>%1</b> %2<br>").arg(label.toHtmlEscaped(), value.toHtmlEscaped());
        text += label + QLatin1Char(' ') + value + QLatin1Char('\n');
    };
    row(tr("What:"), f.summary());
    if (!f.signalName.isEmpty() || f.signal != 0)
        row(tr("Signal:"), f.signalName.isEmpty()
                               ? QString::number(f.signal)
                               : QStringLiteral("%1 (%2)").arg(f.signalName).arg(f.signal));
    row(tr("Exception:"), f.exceptionType);
    row(tr("Message:"), f.message);
    row(tr("Reason:"), f.reason);
    row(tr("Time:"), when);
    if (f.localRank >= 0)
        row(tr("Local rank:"), QString::number(f.localRank));
    if (f.pid > 0)
        row(tr("PID:"), QString::number(f.pid));
    row(tr("Thread:"), f.thread);
    row(tr("Where:"), whereItFailed(f));
    row(tr("Crash report on the node:"), f.reportPath);
    e.stacks = stackSections(f);
    text += stacksText(f);
    e.html = html;
    e.plainText = text;
    return e;
}

QList<FailureEntry> failureEntries(const FailureReport &report,
                                   const QHash<int, QString> &stackDumps)
{
    QList<FailureEntry> out;
    // Two hundred ranks that died alike are one entry, not two hundred.
    for (const FailureGroup &g : report.groups()) {
        FailureEntry e = failureEntry(g.representative);
        if (g.ranks.size() > 1) {
            const QString note = tr("ranks %1: same failure as rank %2 (%3 ranks)")
                                     .arg(formatRankRanges(g.ranks))
                                     .arg(g.representative.rank)
                                     .arg(g.ranks.size());
            // The title stays one line however scattered the ranks (the note has them all).
            e.title =
                QCoreApplication::translate("rankdeck::FailuresPage", "Ranks %1 — %2")
                    .arg(RankGroups::ranges(g.ranks, kTitlePieces), g.representative.summary());
            e.html = QStringLiteral("<p><i>%1</i></p>").arg(note.toHtmlEscaped()) + e.html;
            e.plainText = note + QLatin1Char('\n') + e.plainText;
        }
        if (g.sameAsRoot && report.rootCause()) {
            // Said first, as `show` says it: the entry below repeats the root cause's failure.
            const QString note =
                tr("same failure as rank %1, the root cause").arg(report.rootCause()->rank);
            e.html = QStringLiteral("<p><i>%1</i></p>").arg(note.toHtmlEscaped()) + e.html;
            e.plainText = note + QLatin1Char('\n') + e.plainText;
        }
        out << e;
    }
    // A hang dumps every rank's stacks: ranks that wait in the same places are one entry, the
    // few that stand out first (512 entries hid the three that mattered).
    for (const StackDumpGroup &g : StackDumpGroups::group(stackDumps)) {
        const int rank = g.representative;
        FailureEntry e;
        e.rank = rank; // its time is not known: its log opens at the end
        // One rank: its whole file, as before; a group: the dump that made it one.
        const QString stacks = g.ranks.size() == 1
                                   ? stackDumps.value(rank)
                                   : StackDumpGroups::lastDump(stackDumps.value(rank));
        const RankStackDump dump = RankStackDump::split(stacks);
        QString html;
        QString note;
        if (g.ranks.size() == 1) {
            e.title = QCoreApplication::translate("rankdeck::FailuresPage", "Rank %1 — stack dump")
                          .arg(rank);
        } else {
            e.title = QCoreApplication::translate("rankdeck::FailuresPage",
                                                  "Ranks %1 — stack dumps alike (%2 ranks)")
                          .arg(RankGroups::ranges(g.ranks, kTitlePieces))
                          .arg(g.ranks.size());
            note = tr("ranks %1 wait where rank %2 waits; rank %2's stacks:")
                       .arg(formatRankRanges(g.ranks))
                       .arg(rank);
        }
        html += QStringLiteral("<h3>%1</h3>").arg(e.title.toHtmlEscaped());
        if (!note.isEmpty())
            html += QStringLiteral("<p><i>%1</i></p>").arg(note.toHtmlEscaped());
        const QStringList waits = whereRankWaits(dump);
        if (!waits.isEmpty())
            html += QStringLiteral("<p>%1</p>")
                        .arg(waits.join(QLatin1Char('\n'))
                                 .toHtmlEscaped()
                                 .replace(QLatin1Char('\n'), QStringLiteral("<br>")));
        for (const PythonThreadStack &t : parseFaultHandlerDump(dump.python).threads)
            e.stacks << StackSection{
                tr("Python thread %1%2").arg(t.threadId, t.current ? tr(" (current)") : QString()),
                noteLines(t.note) + pythonLines(t.frames)};
        for (const ThreadStack &t : parseThreadStacks(dump.native))
            e.stacks << StackSection{
                QCoreApplication::translate("rankdeck::FailuresPage", "Thread %1 %2%3")
                    .arg(t.tid)
                    .arg(t.name, t.mainThread ? tr(" (main thread)") : QString()),
                noteLines(t.note) + nativeLines(t.frames, firstOwnFrame(t.frames), false)};
        e.html = html;
        e.plainText = e.title + QLatin1Char('\n') +
                      (note.isEmpty() ? QString() : note + QLatin1Char('\n')) + stacks;
        out << e;
    }
    return out;
}

QString rootCauseBanner(const FailureReport &report)
{
    const RankFailure *root = report.rootCause();
    if (!root)
        return QString();
    QString text = QCoreApplication::translate("rankdeck::FailuresPage", "Root cause: rank %1")
                       .arg(root->rank);
    if (!root->host.isEmpty())
        text += QCoreApplication::translate("rankdeck::FailuresPage", " on %1").arg(root->host);
    text += QStringLiteral(": ") + root->summary();
    const QString where = whereItFailed(*root);
    if (!where.isEmpty())
        text += QCoreApplication::translate("rankdeck::FailuresPage", " in %1").arg(where);
    if (!root->message.isEmpty() && !root->summary().contains(root->message))
        text += QStringLiteral(" — ") + root->message;
    return text;
}

FailureEntry collectiveVerdictEntry(const CollectiveVerdict &v, qint64 collection,
                                    const QString &trigger, const QString &torchFolder)
{
    FailureEntry e;
    e.rootCause = true;
    e.title =
        QCoreApplication::translate("rankdeck::FailuresPage", "Collective — %1").arg(v.headline());
    QString html = QStringLiteral("<h3>%1</h3><p>%2</p>")
                       .arg(v.headline().toHtmlEscaped(), v.text().toHtmlEscaped());
    QString text = v.headline() + QLatin1Char('\n') + v.text() + QLatin1Char('\n');
    if (!v.inCollective().isEmpty()) {
        html += heading(tr("Where each rank is, by its flight recorder"));
        html += QStringLiteral("<table cellspacing=\"0\" cellpadding=\"2\">");
        for (const RankInCollective &c : v.inCollective()) {
            QString role;
            if (v.culprits().contains(c.rank))
                role = tr("culprit");
            else if (v.victims().contains(c.rank))
                role = tr("victim");
            html += QStringLiteral("<tr><td>%1</td><td>%2</td><td><i>%3</i></td></tr>")
                        .arg(tr("rank %1").arg(c.rank).toHtmlEscaped(), c.text().toHtmlEscaped(),
                             role.toHtmlEscaped());
            text +=
                tr("rank %1: %2%3")
                    .arg(c.rank)
                    .arg(c.text(), role.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(role)) +
                QLatin1Char('\n');
        }
        html += QStringLiteral("</table>");
    }
    const QString source = tr("Flight-recorder collection %1 (%2).").arg(collection).arg(trigger);
    html += QStringLiteral("<p>%1</p>").arg(source.toHtmlEscaped());
    text += source + QLatin1Char('\n');
    if (!torchFolder.isEmpty()) {
        const QString command =
            QStringLiteral("python -m torch.distributed.flight_recorder.fr_trace %1 --prefix rank_")
                .arg(torchFolder);
        html +=
            QStringLiteral("<p>%1</p><pre style=\"white-space:pre-wrap\">%2</pre>")
                .arg(
                    tr("torch's own analyser reads the dumps kept (Copy command):").toHtmlEscaped(),
                    command.toHtmlEscaped());
        text += command + QLatin1Char('\n');
        e.commands << command;
    }
    e.html = html;
    e.plainText = text;
    return e;
}

QString collectiveVerdictBanner(const CollectiveVerdict &v)
{
    return QCoreApplication::translate("rankdeck::FailuresPage", "Why the ranks are stuck: %1")
        .arg(v.text());
}

} // namespace rankdeck
