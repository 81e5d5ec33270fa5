// SPDX-License-Identifier: GPL-3.0-or-later
//
// What to train: the worker's command line (see docs of rankdeck-worker) plus what the launcher
// itself does with a run (name, restarts). Kept as the worker's own flags so that every worker
// flag works without the launcher knowing it; accessors cover the ones the launcher reads.
#pragma once

#include <QJsonObject>
#include <QString>
#include <QStringList>

namespace rankdeck {

struct TrainingConfig
{
    QString name;                // run name; empty: the task name
    QStringList workerArguments; // passed to every rank
    int maxRestarts = 0;         // restart the whole gang from the last checkpoint on failure
    QList<int> consoleRanks;     // front ends only: which ranks reach the console (empty: all)

    // Value of "--flag value" in workerArguments (the last one wins, like the worker's parser).
    QString value(const QString &flag, const QString &fallback = QString()) const;
    bool hasFlag(const QString &flag) const;
    void setValue(const QString &flag, const QString &value);
    void removeFlag(const QString &flag);

    QString task() const;   // --task, default "linear"
    int totalSteps() const; // --steps, default 100
    QString checkpointDir() const;
    QString effectiveName() const;

    QJsonObject toJson() const;
    static TrainingConfig fromJson(const QJsonObject &json);
};

} // namespace rankdeck
