// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/rankstackdump.h"

#include "run/failurereport.h"
#include "stream/pythontraceback.h"
#include "util/translation.h"

namespace rankdeck {

namespace {
const QString &pythonMarker()
{
    static const QString marker = QStringLiteral("python stacks (faulthandler):");
    return marker;
}
} // namespace

RankStackDump RankStackDump::split(const QString &body)
{
    RankStackDump d;
    // The marker is a line of its own; a native frame line never equals it.
    const qsizetype at = body.startsWith(pythonMarker() + QLatin1Char('\n'))
                             ? 0
                             : body.indexOf(QLatin1Char('\n') + pythonMarker() + QLatin1Char('\n'));
    if (at < 0) {
        d.native = body;
        return d;
    }
    d.native = body.left(at).trimmed();
    d.python = body.mid(body.indexOf(QLatin1Char('\n'), at + (at > 0 ? 1 : 0)) + 1).trimmed();
    return d;
}

QString RankStackDump::joined() const
{
    if (python.isEmpty())
        return native;
    return native + QLatin1Char('\n') + pythonMarker() + QLatin1Char('\n') + python;
}

QStringList whereRankWaits(const RankStackDump &dump)
{
    QStringList out;
    for (const ThreadStack &t : parseThreadStacks(dump.native)) {
        const bool inCollective = waitsInCollective(t.frames);
        if (!t.mainThread && !inCollective)
            continue;
        const QString where = t.frames.isEmpty() ? t.note : waitLocation(t.frames);
        out << tr("thread %1 (%2)%3: %4")
                   .arg(t.tid)
                   .arg(t.name)
                   .arg(inCollective ? tr(", waits in a collective") : QString())
                   .arg(where);
    }
    for (const PythonThreadStack &t : parseFaultHandlerDump(dump.python).threads) {
        if (t.frames.isEmpty())
            continue;
        const int own = innermostUserFrame(t.frames);
        const PythonFrame &f = t.frames[own >= 0 ? own : 0];
        // The innermost frame says what it waits in (time.sleep, a collective's wait) when it
        // is not the user's own; the user's frame says where in their code.
        QString where = QStringLiteral("%1 at %2:%3")
                            .arg(f.function, f.file.section(QLatin1Char('/'), -1))
                            .arg(f.line);
        if (own > 0)
            where = tr("%1, called from %2").arg(t.frames.first().function, where);
        out << tr("python thread %1%2: %3")
                   .arg(t.threadId.isEmpty() ? tr("(only)") : t.threadId,
                        t.current ? tr(" (current)") : QString(), where);
    }
    return out;
}

} // namespace rankdeck
