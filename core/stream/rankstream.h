// SPDX-License-Identifier: GPL-3.0-or-later
//
// Follows one rank's stdout and stderr: chunks go through a LineSplitter per stream and the
// EventParser, and come out as log lines (for LogStore, the CLI console and the views) and
// worker events (for the run controller and MetricsStore). Not thread-safe by itself: one
// RankStream belongs to whoever receives that rank's transport output.
//
// Progress bars (tqdm, Lightning, Transformers) redraw one row with '\r' and may not end it
// with a newline for a whole epoch. The record keeps the line with every redraw in it, as
// received; on the way:
//   - each redraw that a later one replaced comes out once in Output::redraws as soon as the
//     next one begins (for the metric extractor: a bar's postfix holds the metrics); the line's
//     last state is the line itself;
//   - what the row shows meanwhile comes out in Output::live (LogStore keeps it for the views,
//     which show the bar as one row updating in place);
//   - a complete line that a terminal draws over (a nested bar that moved the cursor back up,
//     a bar cleared to blank, the empty line a nested bar leaves below itself) is marked
//     `overdrawn`: views leave it out, the record keeps it;
//   - an event of the supervisor that lands in the middle of the program's unfinished line
//     (events share the program's stdout, 2 a second) does not end that line: its newline was
//     the event's, so the line goes on and is recorded as the program wrote it.
#pragma once

#include "stream/linesplitter.h"
#include "stream/logline.h"
#include "stream/workerevent.h"
#include "util/streamkind.h"

#include <QByteArray>
#include <QList>
#include <QMetaType>
#include <QString>

namespace rankdeck {

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

    // What the row of a line that redraws itself shows now. Empty text: the row is gone (its
    // line ended and is in `lines`, or the stream ended).
    struct Live
    {
        int rank = -1;
        StreamKind stream = StreamKind::Stdout;
        qint64 timeUs = 0;
        QString text;
        bool nested = false; // the redraw moved the cursor up (a bar below another one)
    };
    // One state of a redrawing line that a later redraw replaced, as displayText() shows it.
    struct Redraw
    {
        StreamKind stream = StreamKind::Stdout;
        qint64 timeUs = 0;
        QString text;
        bool nested = false; // it moved the cursor up after drawing (tqdm position > 0)
        // A top-level row cleared with spaces (text empty): tqdm.write() clears the bars, writes
        // its line, then redraws them, so the next redraw shows where the bar was at that line.
        bool clear = false;
        qsizetype beforeLine = 0; // it came before lines[beforeLine] (ordering with lines)
    };

    struct Output
    {
        QList<LogLine> lines;      // in arrival order, partial pieces included
        QList<WorkerEvent> events; // in arrival order
        QList<Redraw> redraws;     // in arrival order
        QList<Live> live;          // changes of the live rows, in order (the last one counts)
        bool finished = false;     // finish() made it: nothing more comes from the rank
        qint64 timeUs = 0;         // arrival of the last chunk fed into it
    };

    // Redraw texts are kept up to this many bytes (a bar is a few hundred).
    static constexpr qsizetype kMaxRedrawBytes = 4096;

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
        explicit StreamState(qsizetype maxPieceBytes) : splitter(maxPieceBytes) {}
        LineSplitter splitter;
        bool inLongLine = false;  // earlier pieces of the current line were handed out
        QByteArray head;          // display head of the current long line (bounded)
        qint64 segmentLength = 0; // bytes of its last '\r' segment (the head is its start)
        qint64 lineLength = 0;    // bytes of the current long line so far
        // Redraw tracking over the program's own bytes of the current line (events removed).
        // The bytes are looked at once: `skip` of those that come next (the pending start of
        // the line, or the text before an event carried into the next piece) were already.
        qsizetype skip = 0;
        QByteArray carry; // the line's text before an event, prepended to what follows
        bool previousOverdrawn = false;
        QByteArray segment;       // the current '\r' segment (up to kMaxRedrawBytes)
        QByteArray tail;          // the line's last bytes (isOverdrawn looks at them)
        bool crPending = false;   // the bytes so far end in a '\r' (a CRLF or a redraw?)
        bool redrawn = false;     // the current line redrew itself
        QString live;             // what Output::live last said for this stream
        quint64 segments = 0;     // redraws begun (a redraw may draw the same text again)
        quint64 liveSegments = 0; // segments when Output::live last said it
        QString overdrawnText;    // the last complete line was overdrawn: what its row shows
    };

    void handlePieces(StreamKind stream, QList<LinePiece> &pieces, Output &out, qint64 arrivalUs);
    void consume(StreamKind stream, QByteArrayView bytes, bool lineEnds, Output &out,
                 qint64 arrivalUs);
    void consumeNew(StreamKind stream, QByteArrayView bytes, bool lineEnds, Output &out,
                    qint64 arrivalUs);
    void emitSegment(StreamKind stream, Output &out, qint64 arrivalUs);
    void scanPending(StreamKind stream, Output &out, qint64 arrivalUs);
    void updateLive(StreamKind stream, Output &out, qint64 arrivalUs);
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
