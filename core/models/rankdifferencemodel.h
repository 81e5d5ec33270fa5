// SPDX-License-Identifier: GPL-3.0-or-later
//
// "Ranks that differ" (issue 31): at 512 ranks the ones that matter are those not doing what
// the others do. A rank differs when
//   - its state (as RankGroup labels it: "hung", "failed (exit 1)") is not the majority's;
//   - its step is behind or ahead of the median step by more than StepTolerance (ranks of a
//     healthy run are a step or two apart while it runs) and by more than MadFactor times the
//     steps' median absolute deviation: ranks that do not wait for each other (a program without
//     collectives, 96 Python processes started over a few seconds on 2 cores) spread over tens
//     of steps, and then only the far ones stand out, not half of them;
//   - its last line, with numbers left out (step counts, losses, ranks differ between ranks that
//     are fine), is not the majority's.
// A majority is more than half the ranks; without one (half finished, half running) nothing
// stands out by that measure.
// One row per rank that differs, in rank order, saying how.
#pragma once

#include "record/runstate.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QList>
#include <QStringList>

namespace rankdeck {

class LogStore;

struct RankDifference
{
    int rank = -1;
    QString host;
    QStringList how; // "failed (exit 1), most are running", "step 37, the median 100", …
    QString lastLine;
    bool operator==(const RankDifference &) const = default;
};

class RankDifferenceModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column
    {
        RankColumn,
        HostColumn,
        HowColumn,
        LastLineColumn,
        ColumnCount
    };
    enum Role
    {
        RankRole = Qt::UserRole + 1
    };
    static constexpr qint64 StepTolerance = 2;
    static constexpr qint64 MadFactor = 3;

    explicit RankDifferenceModel(QObject *parent = nullptr);

    // The ranks that differ among `ranks`, with each rank's last line (a rank without one has
    // an empty line). O(ranks).
    static QList<RankDifference> differences(const QList<RankStatus> &ranks,
                                             const QHash<int, QString> &lastLines);
    // Each rank's last line as the store holds it.
    static QHash<int, QString> lastLines(const LogStore &store);

    void setDifferences(const QList<RankDifference> &differences);
    QList<RankDifference> differences() const { return m_rows; }

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    QList<RankDifference> m_rows;
};

} // namespace rankdeck
