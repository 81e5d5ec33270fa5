// SPDX-License-Identifier: GPL-3.0-or-later
#include "record/streamoffsets.h"

#include "stream/linesplitter.h"

namespace rankdeck {

namespace {

int index(StreamKind stream)
{
    return stream == StreamKind::Stdout ? 0 : 1;
}

// What RankStream's splitter keeps after `chunk` (a mirror of LineSplitter::feed): bytes after
// the last newline, less the full pieces a line that never ends was already handed out in.
qint64 pendingAfter(qint64 pending, const QByteArray &chunk)
{
    const qsizetype nl = chunk.lastIndexOf('\n');
    qint64 p = nl < 0 ? pending + chunk.size() : chunk.size() - nl - 1;
    const qint64 piece = LineSplitter::kDefaultMaxPieceBytes;
    if (p > piece)
        p = (p - 1) % piece + 1;
    return p;
}

} // namespace

qint64 StreamOffsets::committed(StreamKind stream) const
{
    const int s = index(stream);
    return received[s] - pending[s];
}

void StreamOffsets::add(StreamKind stream, const QByteArray &chunk)
{
    const int s = index(stream);
    received[s] += chunk.size();
    pending[s] = pendingAfter(pending[s], chunk);
}

QJsonObject StreamOffsets::toJson(int rank) const
{
    QJsonObject j;
    j[QStringLiteral("rank")] = rank;
    j[QStringLiteral("attempt")] = attempt;
    j[QStringLiteral("stdout_bytes")] = committed(StreamKind::Stdout);
    j[QStringLiteral("stderr_bytes")] = committed(StreamKind::Stderr);
    return j;
}

StreamOffsets StreamOffsets::fromJson(const QJsonObject &json)
{
    StreamOffsets o;
    o.attempt = json.value(QStringLiteral("attempt")).toInt();
    o.received[0] = json.value(QStringLiteral("stdout_bytes")).toInteger();
    o.received[1] = json.value(QStringLiteral("stderr_bytes")).toInteger();
    return o;
}

} // namespace rankdeck
