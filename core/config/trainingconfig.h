// SPDX-License-Identifier: GPL-3.0-or-later
//
// What to train: the worker's command line (see docs of rankdeck-worker) plus what the launcher
// itself does with a run (name, restarts). Kept as the worker's own flags so that every worker
// flag works without the launcher knowing it; accessors cover the ones the launcher reads.
// Or, with `program` set, the user's own program (launch --exec): its command line, working
// directory, extra environment and metric patterns; rankdeck-supervisor runs it on each rank.
#pragma once

#include <QJsonObject>
#include <QMap>
#include <QString>
#include <QStringList>

namespace rankdeck {

struct TrainingConfig
{
    QString name;                // run name; empty: the task name
    QStringList workerArguments; // passed to every rank
    int maxRestarts = 0;         // restart the whole gang from the last checkpoint on failure
    QList<int> consoleRanks;     // front ends only: which ranks reach the console (empty: all)

    // The user's own program (launch --exec); empty for the built-in worker.
    QStringList program;                // PROGRAM ARGS…
    QString workingDirectory;           // empty: the transport's default (the user's home on SSH)
    QMap<QString, QString> environment; // added to every rank's environment
    QStringList metricPatterns;         // "NAME=REGEX", beside the default patterns
    // Where the program writes TensorBoard event files (relative: to where it runs); empty: its
    // --logdir / --log_dir / --log-dir argument, else runs/ (rankdeck-supervisor decides).
    QString tensorBoardDir;
    // launch --sync: a local directory (absolute) copied to every node before the run, where the
    // program then runs (workingDirectory, if any, is relative to it); local profiles run in it.
    QString syncDirectory;
    qint64 syncLimitBytes = 0; // the most it may hold; 0: SyncManifest::kDefaultLimitBytes
    // launch --warm: a Python program is forked from a warm server on each node that imported
    // torch before (rankdeck-supervisor --warm-python); the profile's warm_python does the same.
    bool warmPython = false;
    // torch's flight recorder on every rank (the collective verdict of a hang); launch
    // --no-flight-recorder turns it off.
    bool flightRecorder = true;

    bool isProgram() const { return !program.isEmpty(); }

    // Value of "--flag value" in workerArguments (the last one wins, like the worker's parser).
    QString value(const QString &flag, const QString &fallback = QString()) const;
    bool hasFlag(const QString &flag) const;
    void setValue(const QString &flag, const QString &value);
    void removeFlag(const QString &flag);

    // --task, default "linear"; for a program, programName().
    QString task() const;
    // What a program's run is called by default: the script an interpreter runs
    // (`python3 -u train.py` → "train", `python -m pkg.train` → "pkg.train"), else the program.
    static QString programName(const QStringList &program);
    int totalSteps() const; // --steps, default 100
    QString checkpointDir() const;
    QString effectiveName() const;

    QJsonObject toJson() const;
    static TrainingConfig fromJson(const QJsonObject &o);
};

} // namespace rankdeck
