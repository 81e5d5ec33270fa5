// SPDX-License-Identifier: GPL-3.0-or-later
#include "stream/rankstream.h"

#include "stream/eventparser.h"

#include <QDateTime>

namespace rankdeck {

RankStream::RankStream(int rank) : RankStream(rank, Options{}) {}

RankStream::RankStream(int rank, const Options &options)
    : m_rank(rank), m_options(options), m_out{LineSplitter(options.maxPieceBytes), false, {}, 0, 0},
      m_err{LineSplitter(options.maxPieceBytes), false, {}, 0, 0}
{}

void RankStream::feed(StreamKind stream, QByteArrayView chunk, Output &out, qint64 arrivalUs)
{
    if (arrivalUs <= 0)
        arrivalUs = QDateTime::currentMSecsSinceEpoch() * 1000;
    QList<LinePiece> pieces;
    state(stream).splitter.feed(chunk, pieces);
    handlePieces(stream, pieces, out, arrivalUs);
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
    for (StreamKind stream : {StreamKind::Stdout, StreamKind::Stderr}) {
        StreamState &st = state(stream);
        QList<LinePiece> pieces;
        st.splitter.finish(pieces);
        if (pieces.isEmpty() && st.inLongLine)
            pieces.append(LinePiece{QByteArray(), true}); // close the long line
        handlePieces(stream, pieces, out, arrivalUs);
    }
}

RankStream::Output RankStream::finish(qint64 arrivalUs)
{
    Output out;
    finish(out, arrivalUs);
    return out;
}

void RankStream::handlePieces(StreamKind stream, QList<LinePiece> &pieces, Output &out,
                              qint64 arrivalUs)
{
    StreamState &st = state(stream);
    const qsizetype maxDisplay = m_options.maxDisplayBytes;

    // Keeps the display head of a long line: the start of its last '\r' segment, bounded.
    // A '\r' that ends the whole line belongs to a CRLF; one inside the line starts a redraw.
    auto extendHead = [&](const QByteArray &bytes, bool endsLine) {
        qsizetype from = 0;
        qsizetype cr = bytes.lastIndexOf('\r');
        if (endsLine && cr >= 0 && cr == bytes.size() - 1)
            cr = cr > 0 ? bytes.lastIndexOf('\r', cr - 1) : -1;
        if (cr >= 0) {
            st.head.clear();
            from = cr + 1;
        }
        const qsizetype room = maxDisplay + 1 - st.head.size();
        if (room > 0)
            st.head.append(bytes.constData() + from, qMin(room, bytes.size() - from));
        st.lineLength += bytes.size();
    };

    for (LinePiece &piece : pieces) {
        if (!piece.complete) {
            LogLine line;
            line.rank = m_rank;
            line.stream = stream;
            line.timeUs = arrivalUs;
            line.byteLength = piece.bytes.size();
            line.partial = true;
            extendHead(piece.bytes, false);
            st.inLongLine = true;
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
        }

        if (st.inLongLine) {
            LogLine line;
            line.rank = m_rank;
            line.stream = stream;
            line.timeUs = arrivalUs;
            extendHead(parsed.text, true);
            line.text = LineSplitter::displayText(st.head, maxDisplay, &line.truncated,
                                                  qMax<qint64>(st.lineLength, st.head.size() + 1));
            line.byteLength = st.lineLength;
            line.raw = std::move(parsed.text);
            out.lines.append(std::move(line));
            ++m_lineCount;
            st.inLongLine = false;
            st.head.clear();
            st.lineLength = 0;
            continue;
        }
        if (!parsed.hasText)
            continue;
        LogLine line;
        line.rank = m_rank;
        line.stream = stream;
        line.timeUs = arrivalUs;
        line.text = LineSplitter::displayText(parsed.text, maxDisplay, &line.truncated);
        line.byteLength = parsed.text.size();
        line.raw = std::move(parsed.text);
        out.lines.append(std::move(line));
        ++m_lineCount;
    }
}

} // namespace rankdeck
