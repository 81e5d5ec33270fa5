// SPDX-License-Identifier: GPL-3.0-or-later
//
// Runs side by side, only what differs: one column per run, one row per thing that is not the
// same in all of them: a worker flag (--lr) or the program's command line, the profile, the world
// size, the duration, and each metric's final and best value (final: the mean over the ranks of
// each rank's last point; best: the lowest mean over a step, or the highest for metrics where
// more is better, such as accuracy and samples/s). Rows whose values are all equal are left out,
// so two runs that differ in --lr show --lr and nothing of what they share.
//
// Rows come in reading order (issue 41): the loss first, then the metrics people look at next
// (step time, samples/s, communication wait, compute, memory), the duration, the settings, and
// the other metrics alphabetically. Metrics are named as on the plot (metric::displayName), their
// ids kept in the row header's tooltip and KeyRole. A worker flag a run did not give shows the
// value the built-in worker used ("0.01 (default)"), so a row compares what the runs did. The
// numbers of a row share their decimals and are right-aligned, so they line up digit by digit.
#pragma once

#include <QAbstractTableModel>
#include <QList>
#include <QString>
#include <QStringList>

namespace rankdeck {

struct RunSummary
{
    QString id;
    QString name;
    QString profile;
    int worldSize = 0;
    bool program = false;
    QStringList arguments;     // the worker's flags, or the program's command line
    qint64 durationUs = 0;     // 0: not ended
    QStringList metrics;       // sorted
    QList<double> finalValues; // per metric, NaN when none
    QList<double> bestValues;

    // From a run record's directory (run.json, state.json, metrics.csv), read only.
    static bool fromRecord(const QString &directory, RunSummary *summary, QString *error);
    static bool higherIsBetter(const QString &metric);
    // The value rankdeck-worker uses for `flag` when `arguments` (its other flags) do not give
    // it, as its flags are written ("0.01", "sgd", "no" for a switch); empty when it has none
    // (--fault). Some depend on other flags: --lr on --optimizer, which depends on --task.
    static QString workerDefault(const QString &flag, const QStringList &arguments);
};

class RunDiffModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Role
    {
        // The row's key: "flag:--lr", "program", "profile", "world_size", "duration",
        // "final:loss", "best:loss"; also given by the vertical header.
        KeyRole = Qt::UserRole + 1
    };

    explicit RunDiffModel(QObject *parent = nullptr);

    void setRuns(const QList<RunSummary> &runs);
    const QList<RunSummary> &runs() const { return m_runs; }
    QStringList keys() const;

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // The table as aligned text (the CLI's compare).
    QString toText() const;

private:
    struct Row
    {
        QString key;
        QString label;
        QString id;         // the raw name: the metric's id or the flag
        QStringList values; // one per run
        bool numeric = false;
    };
    void rebuild();
    void addFlagRows();
    void addMetricRows(const QString &metric);
    // Appends the row unless all its values are equal; `compared` (when given) are what is
    // compared instead of the shown values, so "0.01" and "0.01 (default)" are equal.
    void addIfDiffers(Row row, const QStringList &compared = {});

    QList<RunSummary> m_runs;
    QList<Row> m_rows;
};

} // namespace rankdeck
