// SPDX-License-Identifier: GPL-3.0-or-later
//
// LogFollower, the reader of `rankdeck-cli logs --follow`, on a rank's bytes as the file grows
// in arbitrary chunks (issue 29). Promises checked:
//   - what it holds stays bounded (a line's head and tail), however long a line runs;
//   - a shown line never carries an escape, a newline, a C1 control or a bidi override, and is
//     at most the display size plus the cut marker;
//   - it shows each line as the run record's reader would (displayText of the line, or for a
//     line too long to hold, of its head with its full length; the lines a terminal draws over
//     left out), whatever the chunks;
//   - raw, it gives back every byte in order, in pieces no longer than the line limit.
// Input: [line limit][display bytes][raw] then (chunk length, chunk bytes)… .
#include "fuzzinput.h"

#include "store/logfollower.h"
#include "stream/linesplitter.h"

#include <QList>
#include <QString>

using namespace rankdeck;

namespace {

bool unsafe(const QString &text)
{
    for (const QChar c : text) {
        const ushort u = c.unicode();
        if (u == 0x1b || u == '\n' || (u >= 0x80 && u <= 0x9f) || (u >= 0x202a && u <= 0x202e) ||
            (u >= 0x2066 && u <= 0x2069))
            return true;
    }
    return false;
}

// What the follower must show for one whole line of the file.
void expectLine(QByteArrayView line, qsizetype maxLine, qsizetype maxDisplay, QList<QString> &out)
{
    if (line.size() <= maxLine) {
        if (!LineSplitter::isOverdrawn(line))
            out.append(LineSplitter::displayText(line, maxDisplay));
        return;
    }
    const QString text =
        LineSplitter::displayText(line.first(maxDisplay + 1), maxDisplay, nullptr, line.size());
    if (!LineSplitter::isOverdrawn(line.last(qMin<qsizetype>(line.size(), 512)),
                                   LineSplitter::hasRedraw(line), text))
        out.append(text);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    fuzz::FuzzInput in(data, size);
    const qsizetype maxLine = 16 + in.byte() * 4;
    const qsizetype maxDisplay = qBound(qsizetype(1), qsizetype(1 + in.byte()), maxLine - 1);
    const bool raw = in.byte() & 1;
    LogFollower follower(raw, maxLine, maxDisplay);
    QList<LogFollower::Line> lines;
    QByteArray fed;
    while (!in.atEnd()) {
        const QByteArrayView chunk = in.take(1 + in.byte());
        fed += chunk;
        follower.feed(chunk, lines);
        FUZZ_CHECK(follower.heldBytes() <= maxLine + 512);
    }
    follower.finish(lines);
    FUZZ_CHECK(follower.heldBytes() == 0);

    if (raw) {
        QByteArray rebuilt;
        for (const LogFollower::Line &l : std::as_const(lines)) {
            FUZZ_CHECK(l.raw.size() <= maxLine && !l.raw.contains('\n'));
            rebuilt += l.raw;
            if (l.complete)
                rebuilt += '\n';
        }
        // finish() ends an unterminated last line; the CLI prints its newline.
        FUZZ_CHECK(rebuilt == fed + (fed.isEmpty() || fed.endsWith('\n') ? "" : "\n"));
        return 0;
    }

    const QString marker = LineSplitter::cutMarker(0);
    QList<QString> expected;
    qsizetype start = 0;
    for (qsizetype nl; (nl = fed.indexOf('\n', start)) >= 0; start = nl + 1)
        expectLine(QByteArrayView(fed).sliced(start, nl - start), maxLine, maxDisplay, expected);
    if (start < fed.size())
        expectLine(QByteArrayView(fed).sliced(start), maxLine, maxDisplay, expected);
    FUZZ_CHECK(lines.size() == expected.size());
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const QString &text = lines[i].text;
        FUZZ_CHECK(text == expected[i]);
        FUZZ_CHECK(!unsafe(text));
        // One character per byte at most, plus the marker of a cut line (its number of bytes
        // has at most 20 digits).
        FUZZ_CHECK(text.size() <= maxDisplay + marker.size() + 20);
    }
    return 0;
}
