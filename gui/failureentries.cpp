// SPDX-License-Identifier: GPL-3.0-or-later
#include "failureentries.h"

#include "util/translation.h"

#include "run/failurereport.h"

#include <QCoreApplication>
#include <QDateTime>

namespace rankdeck {

namespace {
QString frameFunction(const QStringList &stack, int index)
{
    if (index < 0 || index >= stack.size())
        return QString();
    return parseFrame(stack[index]).function;
}

QString stackHtml(const QStringList &stack, int firstOwn, const QPalette &palette)
{
    const bool dark = palette.color(QPalette::Base).lightness() < 128;
    const QString ownBackground = dark ? QStringLiteral("#3d3417") : QStringLiteral("#fff3c4");
    QString html = QStringLiteral("<pre style=\"margin:0\">");
    for (int i = 0; i < stack.size(); ++i) {
        const QString line = stack[i].toHtmlEscaped();
        const FrameParts parts = parseFrame(stack[i]);
        const bool own =
            parts.module == QLatin1String("rankdeck-worker") && i >= firstOwn && firstOwn >= 0;
        if (i == firstOwn)
            html += QStringLiteral("<b style=\"background-color:%1\">%2 ◀</b>\n")
                        .arg(ownBackground, line);
        else if (own)
            html += QStringLiteral("<span style=\"background-color:%1\">%2</span>\n")
                        .arg(ownBackground, line);
        else
            html += line + QLatin1Char('\n');
    }
    html += QStringLiteral("</pre>");
    return html;
}

QString rankTitle(const RankFailure &f)
{
    QString where = f.host.isEmpty() ? QString() : QStringLiteral(" @ %1").arg(f.host);
    return QCoreApplication::translate("rankdeck::FailuresPage", "Rank %1%2")
        .arg(f.rank)
        .arg(where);
}
} // namespace

FailureEntry failureEntry(const RankFailure &f, const QPalette &palette)
{
    FailureEntry e;
    e.rootCause = f.rootCause;
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
    row(tr("Where:"), frameFunction(f.stack, f.firstOwnFrame));
    row(tr("Crash report on the node:"), f.reportPath);
    if (!f.stack.isEmpty()) {
        html += QStringLiteral("<h4>%1</h4>")
                    .arg(tr("Stack (innermost first; the worker's own frames highlighted)")
                             .toHtmlEscaped());
        html += stackHtml(f.stack, f.firstOwnFrame, palette);
        text +=
            tr("Stack:") + QLatin1Char('\n') + f.stack.join(QLatin1Char('\n')) + QLatin1Char('\n');
    }
    e.html = html;
    e.plainText = text;
    return e;
}

QList<FailureEntry> failureEntries(const FailureReport &report,
                                   const QHash<int, QString> &stackDumps, const QPalette &palette)
{
    QList<FailureEntry> out;
    for (const RankFailure &f : report.failures)
        out << failureEntry(f, palette);
    QList<int> ranks = stackDumps.keys();
    std::sort(ranks.begin(), ranks.end());
    for (int rank : std::as_const(ranks)) {
        FailureEntry e;
        e.title =
            QCoreApplication::translate("rankdeck::FailuresPage", "Rank %1 — stack dump").arg(rank);
        QString html = QStringLiteral("<h3>%1</h3>").arg(e.title.toHtmlEscaped());
        for (const ThreadStack &t : parseThreadStacks(stackDumps.value(rank))) {
            html += QStringLiteral("<h4>%1</h4>")
                        .arg(QCoreApplication::translate("rankdeck::FailuresPage", "Thread %1 %2%3")
                                 .arg(t.tid)
                                 .arg(t.name.toHtmlEscaped())
                                 .arg(t.mainThread ? tr(" (main thread)") : QString()));
            if (!t.note.isEmpty())
                html += QStringLiteral("<i>%1</i>").arg(t.note.toHtmlEscaped());
            html += stackHtml(t.frames, firstOwnFrame(t.frames), palette);
        }
        e.html = html;
        e.plainText = e.title + QLatin1Char('\n') + stackDumps.value(rank);
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
    const QString where = frameFunction(root->stack, root->firstOwnFrame);
    if (!where.isEmpty())
        text += QCoreApplication::translate("rankdeck::FailuresPage", " in %1").arg(where);
    if (!root->message.isEmpty())
        text += QStringLiteral(" — ") + root->message;
    return text;
}

} // namespace rankdeck
