// SPDX-License-Identifier: GPL-3.0-or-later
//
// A run's metrics as TensorBoard event files:
// DIR/rank-N/events.out.tfevents.<secs>.<host>.rankdeck, one directory per rank (TensorBoard shows
// each as a run), every point at full resolution with the rank's own wall times. Values are written
// as `simple_value` (float32), as PyTorch's SummaryWriter.add_scalar does, so every reader and
// TensorBoard's scalar dashboard take them. Points of a rank go out in step order across metrics,
// segment after segment; a restart from a checkpoint (steps going backwards) gets a SessionLog
// START at its first step, which is how TensorFlow marks one: TensorBoard then shows what the run
// did last, without a zig-zag. TensorBoard's dashboard samples 1,000 points per curve unless
// started with --samples_per_plugin scalars=0; the files hold all of them.
#pragma once

#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

namespace rankdeck {

class MetricsStore;

class TensorBoardExport
{
public:
    struct Result
    {
        int ranks = 0;
        qint64 points = 0;
        QStringList files;
    };

    // hosts: a rank's host for its file name (rank missing: "rankdeck"). Refuses a rank
    // directory that already holds event files (TensorBoard would merge the two exports).
    static bool write(const MetricsStore &store, const QString &directory,
                      const QHash<int, QString> &hosts = {}, Result *result = nullptr,
                      QString *errorMessage = nullptr);
};

} // namespace rankdeck
