// SPDX-License-Identifier: GPL-3.0-or-later
//
// Turns the arbitrary chunks a pipe or an SSH channel delivers into lines. Nothing is ever
// dropped or altered here: every byte that arrives leaves in exactly one piece, so the run
// record on disk can be byte-exact. Memory stays bounded however long a line is: a line longer
// than maxPieceBytes leaves in several pieces (all but the last marked !complete), so a rank that
// prints a gigabyte without a newline costs at most one piece of memory.
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>

namespace rankdeck {

struct LinePiece
{
    QByteArray bytes;     // raw bytes, without the terminating '\n' (a '\r' before it is kept)
    bool complete = true; // false: the same line continues in the next piece
};

class LineSplitter
{
public:
    static constexpr qsizetype kDefaultMaxPieceBytes = qsizetype(1024) * 1024;
    static constexpr qsizetype kDefaultMaxDisplayBytes = qsizetype(16) * 1024;

    explicit LineSplitter(qsizetype maxPieceBytes = kDefaultMaxPieceBytes);

    // Appends the lines (or pieces of a long line) that `chunk` completes to `out`.
    void feed(QByteArrayView chunk, QList<LinePiece> &out);
    // End of stream: hands out the unterminated rest, if any, as a complete line.
    void finish(QList<LinePiece> &out);

    qsizetype pendingBytes() const { return m_pending.size(); }
    qsizetype maxPieceBytes() const { return m_maxPieceBytes; }
    // The start of a line that has not ended yet (what a terminal shows on its last row).
    const QByteArray &pending() const { return m_pending; }
    // Puts bytes back in front of the pending ones: the start of a line that is not finished
    // after all (the newline that seemed to end it was an event's, see RankStream).
    void prependPending(QByteArrayView bytes);

    // What a terminal would show for one line: the text after the last '\r' (progress bars
    // redraw themselves with '\r'; a '\r' right before the newline is ignored), ANSI escape
    // sequences removed, invalid UTF-8 replaced by U+FFFD, NUL and other control characters shown
    // as visible symbols. Text longer than maxDisplayBytes is cut at a character boundary and
    // ends with a marker saying how long the full line is; *truncated tells whether that happened.
    // fullLength is the length of the whole line on disk (may exceed line.size() when only its
    // head is at hand); <= 0 means line.size().
    static QString displayText(QByteArrayView line,
                               qsizetype maxDisplayBytes = kDefaultMaxDisplayBytes,
                               bool *truncated = nullptr, qint64 fullLength = 0);
    // The marker displayText appends to a cut line.
    static QString cutMarker(qint64 fullLength);

    // Whether a terminal draws over this line, so that a view showing what a terminal shows
    // leaves it out (the run record keeps it): a nested progress bar that moved the cursor back
    // up after drawing itself (tqdm's position > 0: `\rValidation 25%|…|\x1b[A`, then the newline
    // lands on the same row again), or a line that redraws itself ('\r' inside it, or cursor
    // movement) and ends up blank (a bar cleared with `\r<spaces>\r`). `tail` is the end of the
    // line (its last few hundred bytes are enough), `redrawn` whether a redraw happened in it,
    // `display` its displayText().
    static bool isOverdrawn(QByteArrayView tail, bool redrawn, const QString &display);
    // The same for a whole line as recorded.
    static bool isOverdrawn(QByteArrayView line);
    // Whether the line redraws itself: a '\r' that is not the '\r' of a CRLF, or an ANSI cursor
    // movement up.
    static bool hasRedraw(QByteArrayView line);

private:
    QByteArray m_pending;
    qsizetype m_maxPieceBytes;
};

} // namespace rankdeck
