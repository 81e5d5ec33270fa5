// SPDX-License-Identifier: GPL-3.0-or-later
//
// One line of a rank's output as RankStream makes it and LogStore, the models and the front
// ends use it: a header of its own so that they need not include RankStream.
#pragma once

#include "util/streamkind.h"

#include <QByteArray>
#include <QMetaType>
#include <QString>

namespace rankdeck {

struct LogLine
{
    int rank = -1;
    StreamKind stream = StreamKind::Stdout;
    qint64 timeUs = 0; // when the launcher received it (µs since the epoch)
    QString text;      // what to show (see LineSplitter::displayText); empty for partial pieces
    bool truncated = false; // text was cut; the whole line is in the run record
    qint64 byteLength = 0;  // length of the whole line as received, in bytes
    // A terminal draws over this line (LineSplitter::isOverdrawn): views showing what a
    // terminal shows skip it; the record and `rankdeck-cli logs --raw` keep it.
    bool overdrawn = false;
    // Not a line of the record but what the row of an unfinished, redrawing line shows now
    // (LogStore::liveLines()); number and sequence are -1.
    bool live = false;
    qint64 number = -1;   // 0-based index among this rank's lines (set by LogStore)
    qint64 sequence = -1; // 0-based index in the merged all-ranks order (set by LogStore)

    // Only between RankStream and LogStore: the exact bytes to append to the run record, and
    // whether the same line continues in the next LogLine of this rank (a line longer than the
    // splitter's piece size). Consumers that print lines must skip partial pieces:
    // `if (line.partial) continue;`. LogStore clears `raw` before keeping a line in memory.
    QByteArray raw;
    bool partial = false;
};

} // namespace rankdeck

Q_DECLARE_METATYPE(rankdeck::LogLine)
