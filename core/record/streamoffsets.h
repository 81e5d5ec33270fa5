// SPDX-License-Identifier: GPL-3.0-or-later
//
// Per rank: how much of its current attempt's stdout and stderr the run record holds, so that a
// later launcher re-attaches every stream at the next byte (no gap, no duplicate). Bytes still
// in the line splitter are not on disk yet, so they are not committed.
#pragma once

#include "util/streamkind.h"

#include <QByteArray>
#include <QJsonObject>

namespace rankdeck {

struct StreamOffsets
{
    int attempt = 0;             // the transport's start count of the rank (rank<R>.a<attempt>)
    qint64 received[2] = {0, 0}; // bytes of stdout, stderr delivered by the transport
    qint64 pending[2] = {0, 0};  // ... of which still in the line splitter (not on disk)

    qint64 committed(StreamKind stream) const;
    // A chunk of this stream was handed to the rank's stream (and its complete lines written).
    void add(StreamKind stream, const QByteArray &chunk);
    // The rank ended: its stream flushed what it held.
    void flush() { pending[0] = pending[1] = 0; }
    // A new process for the rank: counting starts over under the next attempt number.
    void restart() { *this = StreamOffsets{attempt + 1, {0, 0}, {0, 0}}; }

    // {"rank", "attempt", "stdout_bytes", "stderr_bytes"} in state.json; the bytes are the
    // committed ones, so a stream read back has nothing pending.
    QJsonObject toJson(int rank) const;
    static StreamOffsets fromJson(const QJsonObject &json);
};

} // namespace rankdeck
