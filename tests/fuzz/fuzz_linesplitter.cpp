// SPDX-License-Identifier: GPL-3.0-or-later
//
// LineSplitter and LineSplitter::displayText on a rank's raw bytes, cut into arbitrary chunks.
// Promises checked: every byte leaves in exactly one piece, in order (the run record is
// byte-exact); no piece is longer than the piece size; what stays pending is bounded; a shown
// line is bounded and says when it was cut.
// Input: [piece size][display bytes] then (chunk length, chunk bytes)… .
#include "fuzzinput.h"

#include "stream/linesplitter.h"

using namespace rankdeck;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    fuzz::FuzzInput in(data, size);
    const qsizetype maxPiece = 16 + in.byte() * 4;
    const qsizetype maxDisplay = 1 + in.byte();
    LineSplitter splitter(maxPiece);
    QList<LinePiece> pieces;
    QByteArray fed;
    while (!in.atEnd()) {
        const QByteArrayView chunk = in.take(1 + in.byte());
        fed += chunk;
        splitter.feed(chunk, pieces);
        FUZZ_CHECK(splitter.pendingBytes() <= maxPiece);
    }
    const qsizetype beforeFinish = pieces.size();
    splitter.finish(pieces);
    FUZZ_CHECK(splitter.pendingBytes() == 0);

    QByteArray rebuilt;
    for (qsizetype i = 0; i < pieces.size(); ++i) {
        const LinePiece &piece = pieces[i];
        FUZZ_CHECK(piece.bytes.size() <= maxPiece || (i >= beforeFinish && piece.complete));
        FUZZ_CHECK(!piece.bytes.contains('\n'));
        rebuilt += piece.bytes;
        // The piece finish() hands out had no newline in the input.
        if (piece.complete && i < beforeFinish)
            rebuilt += '\n';

        bool truncated = false;
        const QString shown = LineSplitter::displayText(piece.bytes, maxDisplay, &truncated);
        const QString marker = LineSplitter::cutMarker(piece.bytes.size());
        // One character per byte at most, plus the marker of a cut line.
        FUZZ_CHECK(shown.size() <= maxDisplay + marker.size());
        FUZZ_CHECK(!truncated || shown.endsWith(marker));
        FUZZ_CHECK(!shown.contains(QLatin1Char('\x1b')));
        FUZZ_CHECK(!shown.contains(QLatin1Char('\n')));
    }
    FUZZ_CHECK(rebuilt == fed);
    return 0;
}
