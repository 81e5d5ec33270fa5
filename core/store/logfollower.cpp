// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/logfollower.h"

#include "stream/linesplitter.h"

#include <utility>

namespace rankdeck {

namespace {

// What isOverdrawn() looks at of a line's end (LineSplitter::isOverdrawn(line) takes as much).
constexpr qsizetype kTailBytes = 512;
// The longest escape sequence LineSplitter::hasRedraw() recognises.
constexpr qsizetype kCsiBytes = 32;

} // namespace

LogFollower::LogFollower(bool raw, qsizetype maxLineBytes, qsizetype maxDisplayBytes)
    : m_raw(raw), m_maxLineBytes(qMax<qsizetype>(maxLineBytes, 16)),
      m_maxDisplayBytes(qBound<qsizetype>(1, maxDisplayBytes, m_maxLineBytes - 1))
{}

void LogFollower::feed(QByteArrayView chunk, QList<Line> &out)
{
    qsizetype start = 0;
    while (start < chunk.size()) {
        const qsizetype nl = chunk.indexOf('\n', start);
        const QByteArrayView part = chunk.sliced(start, (nl < 0 ? chunk.size() : nl) - start);
        start = nl < 0 ? chunk.size() : nl + 1;
        if (m_raw) {
            // Pieces of at most m_maxLineBytes, in order: the bytes stay the rank's.
            qsizetype off = 0;
            while (m_line.size() + (part.size() - off) > m_maxLineBytes) {
                const qsizetype take = m_maxLineBytes - m_line.size();
                m_line.append(part.sliced(off, take));
                off += take;
                out.append(Line{QString(), std::exchange(m_line, {}), false});
            }
            m_line.append(part.sliced(off));
        } else if (m_length + part.size() <= m_maxLineBytes) {
            m_line.append(part);
        } else {
            // Too long to hold: keep the head (what is shown, as LogStore shows such a line),
            // the tail (whether a terminal draws over it) and whether it redrew itself.
            if (m_tail.isEmpty() && m_length > 0) {
                // The first overflow: what was held becomes head and tail. A '\r' that more
                // bytes follow is a redraw, not a CRLF's.
                m_redrawn = LineSplitter::hasRedraw(m_line) || m_line.endsWith('\r');
                m_tail = m_line.right(kTailBytes);
                m_line.truncate(m_maxDisplayBytes + 1);
            }
            if (m_line.size() < m_maxDisplayBytes + 1)
                m_line.append(part.first(qMin(part.size(), m_maxDisplayBytes + 1 - m_line.size())));
            // With the end of what came before: a '\r' there is followed by more, and an escape
            // sequence (at most 32 bytes) may straddle the two. So whatever the chunks, the
            // answer is hasRedraw() of the whole line.
            if (!m_redrawn && !part.isEmpty()) {
                const QByteArray joined = m_tail.right(kCsiBytes) + part.toByteArray();
                m_redrawn = LineSplitter::hasRedraw(joined);
            }
            m_tail.append(part.last(qMin(part.size(), kTailBytes)));
            if (m_tail.size() > kTailBytes)
                m_tail.remove(0, m_tail.size() - kTailBytes);
        }
        m_length += part.size();
        if (nl >= 0)
            endLine(out);
    }
}

void LogFollower::finish(QList<Line> &out)
{
    if (m_length > 0 || !m_line.isEmpty())
        endLine(out);
}

void LogFollower::endLine(QList<Line> &out)
{
    if (m_raw) {
        out.append(Line{QString(), std::exchange(m_line, {}), true});
    } else if (m_tail.isEmpty()) {
        // As the views show it: a progress bar's last state, not every redraw.
        if (!LineSplitter::isOverdrawn(m_line))
            out.append(Line{LineSplitter::displayText(m_line, m_maxDisplayBytes), {}, true});
    } else {
        const QString text =
            LineSplitter::displayText(m_line, m_maxDisplayBytes, nullptr, m_length);
        if (!LineSplitter::isOverdrawn(m_tail, m_redrawn || LineSplitter::hasRedraw(m_tail), text))
            out.append(Line{text, {}, true});
    }
    m_line.clear();
    m_tail.clear();
    m_length = 0;
    m_redrawn = false;
}

} // namespace rankdeck
