// SPDX-License-Identifier: GPL-3.0-or-later
#include "diagnosis/rankstackdump.h"

#include "diagnosis/failurereport.h"
#include "stream/pythontraceback.h"
#include "util/translation.h"

#include <QSet>

#include <algorithm>

namespace rankdeck {

namespace {
// Started by `threading`: its outermost frame is threading.py's _bootstrap.
bool startedByThreading(const PythonThreadStack &t)
{
    if (t.frames.isEmpty())
        return false;
    const PythonFrame &outer = t.frames.last();
    return outer.function == QLatin1String("_bootstrap") &&
           outer.file.endsWith(QLatin1String("threading.py"));
}

QString frameText(const PythonFrame &f)
{
    return QStringLiteral("%1:%2 in %3")
        .arg(f.file.section(QLatin1Char('/'), -1))
        .arg(f.line)
        .arg(f.function);
}

// The point-to-point call of torch.distributed between the user's frame and the innermost one:
// torch's own function names, the pipelining schedules' batched ones included.
QString pointToPointCall(const QList<PythonFrame> &frames, int own)
{
    static const QSet<QString> calls = {QStringLiteral("send"),
                                        QStringLiteral("recv"),
                                        QStringLiteral("isend"),
                                        QStringLiteral("irecv"),
                                        QStringLiteral("batch_isend_irecv"),
                                        QStringLiteral("send_object_list"),
                                        QStringLiteral("recv_object_list"),
                                        QStringLiteral("_batch_p2p"),
                                        QStringLiteral("_sorted_batch_p2p"),
                                        QStringLiteral("_wait_batch_p2p")};
    const int end = own >= 0 ? own : int(frames.size());
    for (int i = end - 1; i >= 0; --i) {
        const PythonFrame &f = frames[i];
        if (f.file.contains(QLatin1String("torch/distributed/")) && calls.contains(f.function))
            return f.function;
    }
    return QString();
}

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
        // Gloo's send and receive wait in the same transport calls as its collectives; their
        // work types say which it is.
        const bool pointToPoint =
            inCollective && std::any_of(t.frames.cbegin(), t.frames.cend(), [](const QString &f) {
                return f.contains(QLatin1String("::RecvWork::")) ||
                       f.contains(QLatin1String("::SendWork::"));
            });
        const QString where = t.frames.isEmpty() ? t.note : waitLocation(t.frames);
        out << tr("thread %1 (%2)%3: %4")
                   .arg(t.tid)
                   .arg(t.name,
                        pointToPoint   ? tr(", waits in a send or receive")
                        : inCollective ? tr(", waits in a collective")
                                       : QString(),
                        where);
    }
    for (const PythonThreadStack &t : parseFaultHandlerDump(dump.python).threads) {
        if (t.frames.isEmpty() || isHelperPythonThread(t))
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

bool isHelperPythonThread(const PythonThreadStack &t)
{
    for (const PythonFrame &f : t.frames)
        if (f.function.startsWith(QLatin1String("_rankdeck_fr_")))
            return true;
    return startedByThreading(t) && innermostUserFrame(t.frames) < 0;
}

RankPlace rankPlace(const RankStackDump &dump)
{
    RankPlace place;
    // The main thread first (the one `threading` did not start), then any other thread of the
    // user's own.
    const PythonThreadStack *chosen = nullptr;
    const QList<PythonThreadStack> threads = parseFaultHandlerDump(dump.python).threads;
    for (const PythonThreadStack &t : threads)
        if (!t.frames.isEmpty() && !startedByThreading(t) && !isHelperPythonThread(t)) {
            chosen = &t;
            break;
        }
    for (const PythonThreadStack &t : threads)
        if (!chosen && !t.frames.isEmpty() && !isHelperPythonThread(t))
            chosen = &t;
    int own = -1;
    if (chosen) {
        own = innermostUserFrame(chosen->frames);
        place.where = frameText(chosen->frames[own >= 0 ? own : 0]);
        if (own >= 0) {
            place.callFile = chosen->frames[own].file;
            place.callLine = chosen->frames[own].line;
        }
        place.p2pCall = pointToPointCall(chosen->frames, own);
    }
    for (const ThreadStack &t : parseThreadStacks(dump.native)) {
        if (!t.mainThread || t.frames.isEmpty())
            continue;
        place.nativeFrame = waitLocation(t.frames);
        // A request's wait() has no Python frame of torch's: the user's frame is innermost and
        // the native thread waits in a send or a receive.
        if (chosen && own == 0 && place.p2pCall.isEmpty())
            for (const QString &frame : t.frames)
                if (frame.contains(QLatin1String("waitRecv")) ||
                    frame.contains(QLatin1String("waitSend"))) {
                    place.p2pCall = QStringLiteral("wait");
                    break;
                }
        // A native program (the built-in worker): its own code says where.
        const int nativeOwn = firstOwnFrame(t.frames);
        if (dump.python.isEmpty() && nativeOwn >= 0) {
            const FrameParts p = parseFrame(t.frames[nativeOwn]);
            place.where = p.file.isEmpty() ? p.function
                                           : QStringLiteral("%1:%2 in %3")
                                                 .arg(p.file.section(QLatin1Char('/'), -1))
                                                 .arg(p.line)
                                                 .arg(p.function);
        }
        break;
    }
    return place;
}

} // namespace rankdeck
