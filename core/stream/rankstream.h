// SPDX-License-Identifier: GPL-3.0-or-later
//
// Follows one rank's stdout and stderr: chunks go through a LineSplitter per stream and the
// EventParser, and come out as log lines (for LogStore, the CLI console and the views) and
// worker events (for the run controller and MetricsStore). Not thread-safe by itself: one
// RankStream belongs to whoever receives that rank's transport output.
#pragma once

#include "stream/linesplitter.h"
#include "stream/workerevent.h"
#include "transport/transport.h"

#include <QByteArray>
#include <QList>
#include <QMetaType>
#include <QString>

namespace rankdeck {

struct LogLine
{
    int rank = -1;
    StreamKind stream = StreamKind::Stdout;
    qint64 timeUs = 0; // when the launcher received it (µs since the epoch)
    QString text;      // what to show (see LineSplitter::displayText); empty for partial pieces
    bool truncated = false; // text was cut; the whole line is in the run record
    qint64 byteLength = 0;  // length of the whole line as received, in bytes
    qint64 number = -1;     // 0-based index among this rank's lines (set by LogStore)
    qint64 sequence = -1;   // 0-based index in the merged all-ranks order (set by LogStore)

    // Only between RankStream and LogStore: the exact bytes to append to the run record, and
    // whether the same line continues in the next LogLine of this rank (a line longer than the
    // splitter's piece size). Consumers that print lines must skip partial pieces:
    // `if (line.partial) continue;`. LogStore clears `raw` before keeping a line in memory.
    QByteArray raw;
    bool partial = false;
};

class RankStream
{
public:
    struct Options
    {
        qsizetype maxPieceBytes = LineSplitter::kDefaultMaxPieceBytes;
        qsizetype maxDisplayBytes = LineSplitter::kDefaultMaxDisplayBytes;
        // Events naming another rank than this stream's are treated as log text (a rank cannot
        // forge another rank's crash). Off for streams whose rank is not known yet (-1).
        bool checkEventRank = true;
    };

    struct Output
    {
        QList<LogLine> lines;      // in arrival order, partial pieces included
        QList<WorkerEvent> events; // in arrival order
    };

    explicit RankStream(int rank);
    RankStream(int rank, const Options &options);

    int rank() const { return m_rank; }

    // Appends what `chunk` completes to `out`. arrivalUs: receive time, µs since the epoch
    // (0 = now).
    void feed(StreamKind stream, QByteArrayView chunk, Output &out, qint64 arrivalUs = 0);
    Output feed(StreamKind stream, QByteArrayView chunk, qint64 arrivalUs = 0);
    // End of both streams (the process exited): flushes unterminated lines.
    void finish(Output &out, qint64 arrivalUs = 0);
    Output finish(qint64 arrivalUs = 0);

    qint64 lineCount() const { return m_lineCount; } // complete log lines handed out
    qint64 eventCount() const { return m_eventCount; }
    qint64 rejectedEvents() const { return m_rejected; } // torn/forged/unknown markers seen
    QString lastRejectReason() const { return m_lastRejectReason; }

private:
    struct StreamState
    {
        LineSplitter splitter;
        bool inLongLine = false;  // earlier pieces of the current line were handed out
        QByteArray head;          // display head of the current long line (bounded)
        qint64 segmentLength = 0; // bytes of the current '\r' segment of a long line
        qint64 lineLength = 0;    // bytes of the current long line so far
    };

    void handlePieces(StreamKind stream, QList<LinePiece> &pieces, Output &out, qint64 arrivalUs);
    StreamState &state(StreamKind stream) { return stream == StreamKind::Stdout ? m_out : m_err; }

    int m_rank;
    Options m_options;
    StreamState m_out;
    StreamState m_err;
    qint64 m_lineCount = 0;
    qint64 m_eventCount = 0;
    qint64 m_rejected = 0;
    QString m_lastRejectReason;
};

} // namespace rankdeck

Q_DECLARE_METATYPE(rankdeck::LogLine)
