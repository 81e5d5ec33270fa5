// SPDX-License-Identifier: GPL-3.0-or-later
#include "stream/rankstream.h"

#include "stream/eventparser.h"

#include <QDateTime>

namespace rankdeck {

namespace {

constexpr qsizetype kTailBytes = 512;

void keepLast(QByteArray &buffer, QByteArrayView bytes, qsizetype max)
{
    if (bytes.size() >= max) {
        buffer = bytes.last(max).toByteArray();
        return;
    }
    buffer.append(bytes);
    if (buffer.size() > max)
        buffer.remove(0, buffer.size() - max);
}

} // namespace

RankStream::RankStream(int rank) : RankStream(rank, Options{}) {}

RankStream::RankStream(int rank, const Options &options)
    : m_rank(rank), m_options(options), m_out(options.maxPieceBytes), m_err(options.maxPieceBytes)
{}

void RankStream::feed(StreamKind stream, QByteArrayView chunk, Output &out, qint64 arrivalUs)
{
    if (arrivalUs <= 0)
        arrivalUs = QDateTime::currentMSecsSinceEpoch() * 1000;
    out.timeUs = arrivalUs;
    QList<LinePiece> pieces;
    state(stream).splitter.feed(chunk, pieces);
    handlePieces(stream, pieces, out, arrivalUs);
    scanPending(stream, out, arrivalUs);
    updateLive(stream, out, arrivalUs);
}

RankStream::Output RankStream::feed(StreamKind stream, QByteArrayView chunk, qint64 arrivalUs)
{
    Output out;
    feed(stream, chunk, out, arrivalUs);
    return out;
}

void RankStream::finish(Output &out, qint64 arrivalUs)
{
    if (arrivalUs <= 0)
        arrivalUs = QDateTime::currentMSecsSinceEpoch() * 1000;
    out.finished = true;
    out.timeUs = arrivalUs;
    for (StreamKind stream : {StreamKind::Stdout, StreamKind::Stderr}) {
        StreamState &st = state(stream);
        QList<LinePiece> pieces;
        st.splitter.finish(pieces);
        if (!st.carry.isEmpty() && pieces.isEmpty())
            pieces.append(LinePiece{QByteArray(), true}); // the text before the last event
        if (pieces.isEmpty() && st.inLongLine)
            pieces.append(LinePiece{QByteArray(), true}); // close the long line
        handlePieces(stream, pieces, out, arrivalUs);
        st.overdrawnText.clear();
        if (!st.live.isEmpty()) {
            st.live.clear();
            out.live.append(Live{m_rank, stream, arrivalUs, QString()});
        }
    }
}

RankStream::Output RankStream::finish(qint64 arrivalUs)
{
    Output out;
    finish(out, arrivalUs);
    return out;
}

namespace {

// Keeps the display head of a long line: the start of its last '\r' segment, bounded.
// A '\r' that ends the whole line belongs to a CRLF; one inside the line starts a redraw.
// segmentLength: the bytes of that last segment, whose head alone is kept.
void extendHead(QByteArray &head, qint64 &segmentLength, qint64 &lineLength, QByteArrayView bytes,
                bool endsLine, qsizetype maxDisplay)
{
    qsizetype from = 0;
    qsizetype cr = bytes.lastIndexOf('\r');
    if (endsLine && cr >= 0 && cr == bytes.size() - 1)
        cr = cr > 0 ? bytes.lastIndexOf('\r', cr - 1) : -1;
    if (cr >= 0) {
        head.clear();
        segmentLength = 0;
        from = cr + 1;
    }
    const qsizetype room = maxDisplay + 1 - head.size();
    if (room > 0)
        head.append(bytes.constData() + from, qMin(room, bytes.size() - from));
    segmentLength += bytes.size() - from;
    lineLength += bytes.size();
}

} // namespace

void RankStream::emitSegment(StreamKind stream, Output &out, qint64 arrivalUs)
{
    StreamState &st = state(stream);
    ++st.segments;
    if (st.segment.isEmpty())
        return;
    Redraw r;
    r.stream = stream;
    r.timeUs = arrivalUs;
    r.text = LineSplitter::displayText(st.segment, kMaxRedrawBytes);
    r.nested = LineSplitter::isOverdrawn(st.segment.right(kTailBytes), false, r.text);
    r.beforeLine = out.lines.size();
    if (r.text.trimmed().isEmpty()) {
        r.clear = !r.nested && st.segment.contains(' ') && !st.segment.contains('\x1b');
        st.segment.clear();
        if (r.clear) {
            r.text.clear();
            out.redraws.append(std::move(r));
        }
        return;
    }
    st.segment.clear();
    out.redraws.append(std::move(r));
}

void RankStream::consume(StreamKind stream, QByteArrayView bytes, bool lineEnds, Output &out,
                         qint64 arrivalUs)
{
    StreamState &st = state(stream);
    keepLast(st.tail, bytes, kTailBytes);
    if (bytes.isEmpty()) {
        st.crPending = false; // the line ended right after a '\r': a CRLF
        return;
    }
    if (!st.redrawn && bytes.contains('\x1b') && LineSplitter::hasRedraw(bytes))
        st.redrawn = true;
    auto append = [&st](QByteArrayView part) {
        const qsizetype room = kMaxRedrawBytes + 1 - st.segment.size();
        if (room > 0)
            st.segment.append(part.first(qMin(room, part.size())));
    };
    if (st.crPending) {
        // The '\r' that ended the earlier bytes has more after it: a redraw.
        st.crPending = false;
        st.redrawn = true;
        emitSegment(stream, out, arrivalUs);
    }
    qsizetype from = 0;
    for (;;) {
        const qsizetype cr = bytes.indexOf('\r', from);
        if (cr < 0) {
            append(bytes.sliced(from));
            break;
        }
        append(bytes.sliced(from, cr - from));
        if (cr == bytes.size() - 1) {
            // At the end of a line it is a CRLF's; otherwise the next bytes decide.
            st.crPending = !lineEnds;
            break;
        }
        st.redrawn = true;
        emitSegment(stream, out, arrivalUs);
        from = cr + 1;
    }
}

void RankStream::consumeNew(StreamKind stream, QByteArrayView bytes, bool lineEnds, Output &out,
                            qint64 arrivalUs)
{
    StreamState &st = state(stream);
    const qsizetype seen = qMin(st.skip, bytes.size());
    st.skip -= seen;
    if (seen == bytes.size() && seen > 0 && !lineEnds)
        return;
    consume(stream, bytes.sliced(seen), lineEnds, out, arrivalUs);
}

void RankStream::scanPending(StreamKind stream, Output &out, qint64 arrivalUs)
{
    // The unfinished line's redraws come out as soon as the next one begins: up to its last
    // '\r' that has bytes after it (a CRLF split between two chunks is no redraw).
    StreamState &st = state(stream);
    const QByteArray &pending = st.splitter.pending();
    if (pending.size() < 2)
        return;
    qsizetype cr = pending.lastIndexOf('\r');
    if (cr == pending.size() - 1) {
        // A last '\r' may be a CRLF's, unless it ends a row of spaces: tqdm's clear
        // ("\r<spaces>\r"), which says a line is being written between the bars right now.
        const qsizetype before = pending.lastIndexOf('\r', cr - 1);
        bool spaces = cr - before > 1;
        for (qsizetype i = before + 1; spaces && i < cr; ++i)
            spaces = pending[i] == ' ';
        if (!spaces)
            cr = before;
    }
    if (cr < 0 || cr + 1 <= st.skip)
        return;
    const qsizetype from = qMin(st.skip, pending.size());
    consume(stream, QByteArrayView(pending).sliced(from, cr + 1 - from), false, out, arrivalUs);
    st.skip = cr + 1;
    if (st.crPending) {
        // Bytes follow that '\r' (they are what the row shows now): a redraw, known already.
        st.crPending = false;
        st.redrawn = true;
        emitSegment(stream, out, arrivalUs);
    }
}

void RankStream::updateLive(StreamKind stream, Output &out, qint64 arrivalUs)
{
    StreamState &st = state(stream);
    const QByteArray &pending = st.splitter.pending();
    QString text;
    bool nested = false;
    // A '\r' that ends what came so far may be a CRLF's: no redraw on its own.
    const qsizetype cr = pending.indexOf('\r');
    if ((st.inLongLine || !pending.isEmpty()) &&
        (st.redrawn || st.crPending || (cr >= 0 && cr < pending.size() - 1))) {
        // The row shows the redraw being drawn: the unfinished line after its last '\r' (one
        // that ends it may be a CRLF's), up to an event that may be arriving in pieces.
        QByteArrayView view(pending);
        const qsizetype marker = view.indexOf('\x1e');
        if (marker >= 0)
            view = view.first(marker);
        if (view.size() >= 2)
            view = view.sliced(view.lastIndexOf('\r', view.size() - 2) + 1);
        const QByteArrayView tail = view.size() > 512 ? view.last(512) : view;
        if (view.size() > m_options.maxDisplayBytes + 1)
            view = view.first(m_options.maxDisplayBytes + 1);
        text = LineSplitter::displayText(view, m_options.maxDisplayBytes);
        if (text.trimmed().isEmpty())
            return; // cleared for a moment (tqdm.write): the row keeps its last state
        nested = LineSplitter::isOverdrawn(tail, false, text);
    } else {
        text = st.overdrawnText; // a nested bar's row is still on the screen
    }
    // A new redraw of the same text still tells the metric extractor that the bar was drawn
    // (tqdm.write's redraw after its clear).
    if (text == st.live && (text.isEmpty() || st.segments == st.liveSegments))
        return;
    st.live = text;
    st.liveSegments = st.segments;
    out.live.append(Live{m_rank, stream, arrivalUs, text, nested});
}

void RankStream::handlePieces(StreamKind stream, QList<LinePiece> &pieces, Output &out,
                              qint64 arrivalUs)
{
    StreamState &st = state(stream);
    const qsizetype maxDisplay = m_options.maxDisplayBytes;

    for (LinePiece &piece : pieces) {
        if (!st.carry.isEmpty()) {
            piece.bytes.prepend(st.carry);
            st.carry.clear();
        }
        if (!piece.complete) {
            // A long line leaves in pieces: their bytes go to the record now.
            extendHead(st.head, st.segmentLength, st.lineLength, piece.bytes, false, maxDisplay);
            st.inLongLine = true;
            consumeNew(stream, piece.bytes, false, out, arrivalUs);
            LogLine line;
            line.rank = m_rank;
            line.stream = stream;
            line.timeUs = arrivalUs;
            line.byteLength = piece.bytes.size();
            line.partial = true;
            line.raw = std::move(piece.bytes);
            out.lines.append(std::move(line));
            continue;
        }

        ParsedLine parsed = EventParser::parse(piece.bytes, m_options.checkEventRank ? m_rank : -1);
        if (parsed.rejectedEvent) {
            ++m_rejected;
            m_lastRejectReason = parsed.rejectReason;
        }
        if (parsed.event) {
            ++m_eventCount;
            out.events.append(std::move(*parsed.event));
            // The newline was the event's: the program's line, if it had begun, goes on with
            // what comes next.
            if (parsed.hasText && !parsed.text.isEmpty()) {
                consumeNew(stream, parsed.text, false, out, arrivalUs);
                st.skip = parsed.text.size();
                st.carry = std::move(parsed.text);
            }
            continue;
        }

        consumeNew(stream, parsed.text, true, out, arrivalUs);
        st.skip = 0;
        LogLine line;
        line.rank = m_rank;
        line.stream = stream;
        line.timeUs = arrivalUs;
        if (st.inLongLine) {
            extendHead(st.head, st.segmentLength, st.lineLength, parsed.text, true, maxDisplay);
            // Cut when what it shows, its last redraw, did not fit; earlier redraws are no cut.
            line.text = LineSplitter::displayText(st.head, maxDisplay, &line.truncated,
                                                  qMax<qint64>(st.segmentLength, st.head.size()));
            line.byteLength = st.lineLength;
        } else {
            line.text = LineSplitter::displayText(parsed.text, maxDisplay, &line.truncated);
            line.byteLength = parsed.text.size();
        }
        // A nested bar leaves the row below it empty on its way back up: that row is its.
        line.overdrawn = LineSplitter::isOverdrawn(st.tail, st.redrawn, line.text) ||
                         (st.previousOverdrawn && parsed.text.isEmpty() && !st.inLongLine);
        st.previousOverdrawn = line.overdrawn;
        st.overdrawnText = line.overdrawn && !line.text.trimmed().isEmpty() ? line.text
                           : line.overdrawn                                 ? st.overdrawnText
                                                                            : QString();
        line.raw = std::move(parsed.text);
        out.lines.append(std::move(line));
        ++m_lineCount;
        st.inLongLine = false;
        st.head.clear();
        st.segmentLength = 0;
        st.lineLength = 0;
        st.segment.clear();
        st.tail.clear();
        st.crPending = false;
        st.redrawn = false;
    }
    if (!st.carry.isEmpty()) {
        // The line goes on in the bytes still to come.
        st.splitter.prependPending(st.carry);
        st.carry.clear();
    }
}

} // namespace rankdeck
