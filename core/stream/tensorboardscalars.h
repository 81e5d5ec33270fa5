// SPDX-License-Identifier: GPL-3.0-or-later
//
// Scalars from the TensorBoard event files of a user's program (torch.utils.tensorboard's
// SummaryWriter and the like). The rank's supervisor follows the files on the node and forwards
// their bytes as `tfevents` events (file, offset, data); here each file gets its own
// TfRecordReader, which holds a half-written last record until its rest arrives, and each
// record is parsed with the protoc-compiled messages of core/tensorboard into points:
//   - tag = the summary value's tag; for a file of SummaryWriter.add_scalars (in a directory
//     named <tag>_<sub>, its tag's '/' written as '_') it is <tag>/<sub>, as TensorBoard shows it;
//   - name = "tb/" + tag: the curves of the event files are kept apart from those parsed from
//     the program's printed lines (Lightning's TensorBoardLogger logs `train_loss` every
//     log_every_n_steps, its progress bar shows `train_loss` every step; one series of both
//     would zig-zag between two samplings), and TensorBoard groups the tags of an exported run
//     by the part before the first '/', so they stay one group there;
//   - step = the event's step, wall time = its wall_time, value = simple_value, or the one
//     number of a scalar tensor (float, double, int32, int64; plugin "scalars" or none).
// Anything else (images, histograms, graphs, text) is skipped silently: it is not a curve.
// A file that is damaged or not an event file at all is named once in problems; what can be
// read of it still is. Bytes that did not arrive (a gap in the offsets) and a file that shrank
// start its reader afresh, named once each too. Plain data in and out, one per run.
// The bytes come from a rank, which may be hostile or broken (issue 29): at most kMaxFilesPerRank
// files per rank are read (as the supervisor follows), a reader holds at most kMaxHeldPerFile
// bytes of a record that has not ended (a longer one is skipped), and all readers together at
// most kMaxHeldTotal (the file that would pass it is skipped to its next record). Each excess is
// named once per rank.
#pragma once

#include "stream/workerevent.h"
#include "tensorboard/tfrecord.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

namespace rankdeck {

class TensorBoardScalars
{
public:
    static constexpr QLatin1StringView kNamePrefix{"tb/"};
    static constexpr int kMaxFilesPerRank = 256;
    static constexpr qsizetype kMaxHeldPerFile = qsizetype(16) * 1024 * 1024;
    static constexpr qsizetype kMaxHeldTotal = qsizetype(64) * 1024 * 1024;

    struct Point
    {
        QString name; // kNamePrefix + tag
        qint64 step = 0;
        qint64 wallTimeUs = 0;
        double value = 0;
        QString tag; // as TensorBoard shows it
        bool operator==(const Point &other) const = default;
    };
    struct Output
    {
        QList<Point> points;
        QStringList problems; // for the run's notes, each naming the rank and the file
    };

    // A tfevents event of `rank` (other events are ignored).
    void feed(int rank, const WorkerEvent &event, Output &out);
    // The rank's process ended: a file that ends in half a record says so.
    void finish(int rank, Output &out);

    // The scalars of one record (an Event message) of the file `fileName` (used for the
    // add_scalars name); false when the record is no Event message.
    static bool decode(const QByteArray &record, const QString &fileName, QList<Point> *points);

    int fileCount() const { return int(m_files.size()); }
    qint64 recordCount() const { return m_records; }
    // Bytes of unfinished records held by all readers (counted afresh, for tests and checks).
    qsizetype heldBytes() const;

private:
    struct File
    {
        tensorboard::TfRecordReader reader;
        qint64 nextOffset = -1; // -1: nothing came yet
        int corruptSeen = 0;    // the reader's count when last looked at
        bool damageNoted = false;
        bool gapNoted = false;
        // Started at an offset that may be inside a record: skipping to the first record that
        // checks out is expected there, no damage.
        bool resync = false;
    };

    void takeRecords(int rank, const QString &name, File &file, Output &out);
    // Drops what `file`'s reader holds (its record is skipped); it reads on at the next record.
    void dropHeld(File &file);

    QHash<QPair<int, QString>, File> m_files;
    QHash<int, int> m_filesPerRank;
    QHash<int, int> m_noted; // per rank: which of the excesses below were named (bits)
    qsizetype m_held = 0;
    qint64 m_records = 0;
};

} // namespace rankdeck
