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

} // namespace rankdeck
