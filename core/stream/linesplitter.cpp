// SPDX-License-Identifier: GPL-3.0-or-later
#include "stream/linesplitter.h"

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

namespace {

// Drops ANSI escape sequences (colours, cursor movement): the views cannot render them and
// half of one would show as garbage.
QByteArray stripAnsi(QByteArrayView in)
{
    if (in.indexOf('\x1b') < 0)
        return in.toByteArray();
    QByteArray out;
    out.reserve(in.size());
    const qsizetype n = in.size();
    for (qsizetype i = 0; i < n; ++i) {
        const char c = in[i];
        if (c != '\x1b') {
            out.append(c);
            continue;
        }
        if (i + 1 >= n)
            break;
        const char kind = in[i + 1];
        if (kind == '[') {
            qsizetype j = i + 2;
            while (j < n && uchar(in[j]) >= 0x20 && uchar(in[j]) <= 0x3f)
                ++j;
            if (j < n && uchar(in[j]) >= 0x40 && uchar(in[j]) <= 0x7e)
                i = j;
            else
                i = j - 1;
        } else if (kind == ']') {
            // OSC: ends with BEL or ESC '\'.
            qsizetype j = i + 2;
            while (j < n && in[j] != '\a' && !(in[j] == '\x1b' && j + 1 < n && in[j + 1] == '\\'))
                ++j;
            i = (j < n && in[j] == '\x1b') ? j + 1 : j;
        } else {
            i += 1;
        }
    }
    return out;
}

} // namespace

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

    QByteArray bytes = stripAnsi(line);
    if (maxDisplayBytes > 0 && bytes.size() > maxDisplayBytes) {
        qsizetype at = maxDisplayBytes;
        // Never cut inside a UTF-8 sequence.
        while (at > 0 && (uchar(bytes[at]) & 0xc0) == 0x80)
            --at;
        bytes.truncate(at);
        cut = true;
    }

    QString text = QString::fromUtf8(bytes);
    for (QChar &ch : text) {
        const ushort u = ch.unicode();
        if (u < 0x20 && u != '\t')
            ch = QChar(ushort(0x2400 + u)); // Control Pictures block: NUL shows as ␀
        else if (u == 0x7f)
            ch = QChar(ushort(0x2421));
    }
    if (cut)
        text += cutMarker(fullLength);
    if (truncated)
        *truncated = cut;
    return text;
}

} // namespace rankdeck
