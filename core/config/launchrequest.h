// SPDX-License-Identifier: GPL-3.0-or-later
//
// What a user asks to launch, as a front end holds it (words and folders as typed), before it
// becomes a TrainingConfig. The rules a launch must meet live here once, with one wording: the
// CLI names a problem's field by its flag (--sync), the launch dialog by its label (sync
// folder), and both show the same message after it (issue 28: the two had drifted apart, and the
// dialog let a run name with '/' and an unreadable sync folder through).
// What only one front end can get wrong stays there: where the CLI's `--` goes, which flags
// need --exec (the dialog hides those fields), the dialog's script task's two files.
#pragma once

#include "config/trainingconfig.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace rankdeck {

struct Profile;

struct LaunchRequest
{
    enum class Field
    {
        Program,          // the user's program and its arguments
        Environment,      // NAME=VALUE words
        Metric,           // NAME=REGEX metric patterns
        WorkingDirectory, // where the program runs
        SyncFolder,       // the folder copied to the nodes
        SyncLimit,        // the most the copy may hold
        WorkerArguments,  // the built-in worker's flags
        Name,             // the run's name
    };
    struct Problem
    {
        Field field;
        QString message; // without the field's name: "\"x\" does not exist"
    };

    bool runsProgram = false; // the user's program, or the built-in worker
    QStringList command;      // the program and its arguments, or the worker's flags
    QStringList environment;  // NAME=VALUE words
    QStringList metricPatterns;
    QString workingDirectory;
    QString syncFolder; // empty: nothing is copied
    QString syncLimit;  // "500M", "2G", "0" (no limit); empty: the default
    QString tensorBoardDir;
    bool warmPython = false;
    QString name;
    int maxRestarts = 0;
    bool flightRecorder = true;

    // Every problem, in the order of the fields; empty: it can be launched.
    QList<Problem> problems() const;
    // The line a front end shows: the field as it names it ("--sync", "sync folder"), then the
    // message; a metric pattern's message names the pattern already.
    static QString text(const Problem &problem, const QString &fieldName);
    // The run it asks for on `profile`; meaningful only when problems() is empty.
    TrainingConfig config(const Profile &profile) const;
    // What a recorded run asked for: config() backwards, so that it can be launched again.
    static LaunchRequest of(const TrainingConfig &config);
    // `rankdeck-cli launch …` words that ask for it on the profile named, ranksPerNode ranks on
    // each node (0: the profile's own).
    QStringList cliArguments(const QString &profileName, int ranksPerNode) const;
};

} // namespace rankdeck
