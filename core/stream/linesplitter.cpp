// SPDX-License-Identifier: GPL-3.0-or-later
#include "stream/linesplitter.h"

#include "util/printabletext.h"

#include <QCoreApplication>

namespace rankdeck {

LineSplitter::LineSplitter(qsizetype maxPieceBytes)
    : m_maxPieceBytes(qMax<qsizetype>(maxPieceBytes, 16))
{}

void LineSplitter::feed(QByteArrayView chunk, QList<LinePiece> &out)
{
    qsizetype start = 0;
    while (start < chunk.size()) {
        const qsizetype nl = chunk.indexOf('\n', start);
        if (nl < 0) {
            m_pending.append(chunk.sliced(start));
            break;
        }
        const QByteArrayView tail = chunk.sliced(start, nl - start);
        if (m_pending.isEmpty() && tail.size() <= m_maxPieceBytes) {
            // The common case: a whole short line inside one chunk, one copy.
            out.append(LinePiece{tail.toByteArray(), true});
        } else {
            m_pending.append(tail);
            // A long line leaves in pieces of exactly m_maxPieceBytes plus the rest.
            qsizetype off = 0;
            while (m_pending.size() - off > m_maxPieceBytes) {
                out.append(LinePiece{m_pending.mid(off, m_maxPieceBytes), false});
                off += m_maxPieceBytes;
            }
            out.append(LinePiece{m_pending.mid(off), true});
            m_pending.clear();
        }
        start = nl + 1;
    }
    // Bound memory for lines that never end.
    if (m_pending.size() > m_maxPieceBytes) {
        qsizetype off = 0;
        while (m_pending.size() - off > m_maxPieceBytes) {
            out.append(LinePiece{m_pending.mid(off, m_maxPieceBytes), false});
            off += m_maxPieceBytes;
        }
        m_pending.remove(0, off);
    }
}

void LineSplitter::prependPending(QByteArrayView bytes)
{
    m_pending.prepend(bytes);
}

void LineSplitter::finish(QList<LinePiece> &out)
{
    if (!m_pending.isEmpty()) {
        out.append(LinePiece{m_pending, true});
        m_pending.clear();
    }
}

QString LineSplitter::cutMarker(qint64 fullLength)
{
    return QCoreApplication::translate("rankdeck::LineSplitter",
                                       " … [line cut, %1 bytes in full in the run record]")
        .arg(fullLength);
}

QString LineSplitter::displayText(QByteArrayView line, qsizetype maxDisplayBytes, bool *truncated,
                                  qint64 fullLength)
{
    if (fullLength <= 0)
        fullLength = line.size();
    bool cut = fullLength > line.size();

    while (!line.isEmpty() && line.back() == '\r')
        line.chop(1);
    const qsizetype cr = line.lastIndexOf('\r');
    if (cr >= 0)
        line = line.sliced(cr + 1);

    bool cutHere = false;
    QString text = printableText(line, maxDisplayBytes, &cutHere);
    cut = cut || cutHere;
    if (cut)
        text += cutMarker(fullLength);
    if (truncated)
        *truncated = cut;
    return text;
}

namespace {

// An ANSI control sequence starting at `at` (ESC '['): its length and final byte, or 0.
qsizetype csiLength(QByteArrayView s, qsizetype at, char *final)
{
    if (at + 1 >= s.size() || s[at] != '\x1b' || s[at + 1] != '[')
        return 0;
    for (qsizetype j = at + 2; j < s.size() && j < at + 32; ++j) {
        const char c = s[j];
        if (c >= 0x40 && c <= 0x7e) {
            *final = c;
            return j - at + 1;
        }
        if (c < 0x20 || c > 0x3f)
            return 0;
    }
    return 0;
}

bool isCursorUp(char final)
{
    return final == 'A' || final == 'F'; // cursor up, cursor to the start of a previous line
}

} // namespace

bool LineSplitter::hasRedraw(QByteArrayView line)
{
    qsizetype end = line.size();
    if (end > 0 && line[end - 1] == '\r')
        --end; // the '\r' of a CRLF
    for (qsizetype i = 0; i < end; ++i) {
        if (line[i] == '\r')
            return true;
        char final = 0;
        if (line[i] == '\x1b' && csiLength(line, i, &final) > 0 && isCursorUp(final))
            return true;
    }
    return false;
}

bool LineSplitter::isOverdrawn(QByteArrayView tail, bool redrawn, const QString &display)
{
    // The cursor went up after the last thing the line drew: the next line draws this row.
    bool up = false;
    for (qsizetype i = 0; i < tail.size(); ++i) {
        const char c = tail[i];
        char final = 0;
        const qsizetype csi = c == '\x1b' ? csiLength(tail, i, &final) : 0;
        if (csi > 0) {
            if (isCursorUp(final))
                up = true;
            i += csi - 1;
        } else if (c == '\x1b' && i + 1 < tail.size() && tail[i + 1] == 'M') {
            up = true; // reverse index
            ++i;
        } else if (c != '\r' && c != ' ' && c != '\t') {
            up = false; // something was drawn after it
        }
    }
    if (up)
        return true;
    return redrawn && display.trimmed().isEmpty();
}

bool LineSplitter::isOverdrawn(QByteArrayView line)
{
    const QByteArrayView tail = line.size() > 512 ? line.last(512) : line;
    return isOverdrawn(tail, hasRedraw(line), displayText(line));
}

} // namespace rankdeck
