// SPDX-License-Identifier: GPL-3.0-or-later
//
// What `rankdeck-cli logs --follow` makes of one rank's log file (rank-N.log) while another
// process appends to it: lines as the run record's own reader shows them (LineSplitter::
// displayText: escape sequences removed, controls made visible, a long line cut with the marker
// that says how long it is in full; the lines a terminal draws over left out), or with `raw`
// the bytes exactly as the rank wrote them. The bytes come from a rank, so nothing here trusts
// them: memory stays bounded however long a line runs without a newline (the head is kept for
// display, the tail for the overdrawn check, and only the length of the rest).
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>

namespace rankdeck {

class LogFollower
{
public:
    struct Line
    {
        QString text;         // display text (not raw)
        QByteArray raw;       // the bytes (raw), without the '\n'
        bool complete = true; // raw: false when the same line continues in the next Line
    };

    // Up to this much of a line is read whole, as LogStore does (kMaxReadBack); a longer line
    // keeps only its head and tail. Raw lines leave in pieces of at most this size.
    static constexpr qsizetype kMaxLineBytes = qsizetype(1024) * 1024;
    // The most bytes a reader takes from the file at once.
    static constexpr qint64 kReadChunk = qint64(1024) * 1024;

    explicit LogFollower(bool raw = false, qsizetype maxLineBytes = kMaxLineBytes,
                         qsizetype maxDisplayBytes = qsizetype(16) * 1024);

    // The next bytes of the file; appends what they finish to `out`.
    void feed(QByteArrayView chunk, QList<Line> &out);
    // The file is complete: its unterminated rest, if any, as a last line.
    void finish(QList<Line> &out);
    // What is held between calls (bounded by about maxLineBytes + 1 KiB).
    qsizetype heldBytes() const { return m_line.size() + m_tail.size(); }

private:
    void endLine(QList<Line> &out);

    bool m_raw;
    qsizetype m_maxLineBytes;
    qsizetype m_maxDisplayBytes;
    QByteArray m_line;      // the line so far (only its head once it outgrew m_maxLineBytes)
    QByteArray m_tail;      // its last bytes, once it outgrew m_maxLineBytes
    qint64 m_length = 0;    // its full length
    bool m_redrawn = false; // a '\r' (not of a CRLF) or a cursor movement up in the dropped part
};

} // namespace rankdeck
