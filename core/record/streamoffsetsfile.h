// SPDX-License-Identifier: GPL-3.0-or-later
//
// streams.bin in the run directory: per rank, the stream offsets of StreamOffsets as fixed
// 24-byte records (attempt, committed stdout bytes, committed stderr bytes; little-endian int64)
// rewritten in place right after each chunk's lines are on disk. state.json carries the same
// offsets but is rewritten at most every 0.5 s; a launcher killed in between (SIGKILL, a power
// cut) would leave a later re-attach half a second behind, reading those lines twice. This file
// is behind the log files by one write at most. Its size is ranks × 24 bytes, whatever the run's
// length.
#pragma once

#include "record/streamoffsets.h"

#include <QFile>
#include <QList>
#include <QString>

namespace rankdeck {

class StreamOffsetsFile
{
public:
    static QString fileName() { return QStringLiteral("streams.bin"); }

    bool open(const QString &runDirectory);
    bool isOpen() const { return m_file.isOpen(); }
    // The rank's committed offsets, in place.
    void write(int rank, const StreamOffsets &offsets);

    // The records of a run directory (missing ranks: attempt 0).
    static QList<StreamOffsets> read(const QString &runDirectory, int ranks);
    // For each rank, the file's offsets where they are ahead of state.json's (a later attempt,
    // or the same attempt with more bytes committed).
    static void takeNewer(QList<StreamOffsets> *fromState, const QList<StreamOffsets> &fromFile);

private:
    QFile m_file;
};

} // namespace rankdeck
