// SPDX-License-Identifier: GPL-3.0-or-later
//
// Several runs at once, each its own RunController (own transport, streams, stores, record
// directory: nothing shared between runs), plus the history of recorded runs. Front ends keep
// one RunManager; it owns the controllers it hands out.
#pragma once

#include "record/runrecord.h"
#include "run/runcontroller.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QTimer>

namespace rankdeck {

class RunsDirectoryWatcher;

class RunManager : public QObject
{
    Q_OBJECT
public:
    // An empty directory means RunRecord::defaultRunsDirectory().
    explicit RunManager(const QString &runsDirectory = QString(), QObject *parent = nullptr);
    ~RunManager() override;

    QString runsDirectory() const { return m_runsDirectory; }

    // Starts a run (options.runsDirectory is set to this manager's). nullptr and *error when it
    // could not start; the failed attempt still appears in the history when it got a record.
    RunController *launch(const Profile &profile, const TrainingConfig &config,
                          RunController::Options options, QString *error);
    // Takes over a detached run (RunController::reattach) by id or name; the controller is then
    // live here like a launched one. nullptr and *error when it cannot.
    RunController *reattach(const QString &idOrName, RunController::Options options,
                            QString *error);
    // Releases every active detachable run (detachAndRelease); returns those that were released.
    // The GUI calls it on quit, then stopAll() for the rest.
    QStringList detachAll();

    // A run by id or name: the live controller when this manager runs it, else the record
    // reopened read-only (kept until closeRun()).
    RunController *open(const QString &idOrName, QString *error);
    void closeRun(const QString &runId);
    // Deletes a run's record (its folder) for good; *freedBytes (if given): what it held.
    // Refused, with *error, for a run that may still be going (here, in another process, or
    // detached on its nodes): stop it first.
    bool remove(const QString &runId, QString *error, qint64 *freedBytes = nullptr);
    RunController *controller(const QString &runId) const;
    QList<RunController *> activeRuns() const;

    // Recorded runs, newest first, with the live state of the runs this manager runs. Kept up to
    // date with the runs directory: a run that another process starts shows within a second,
    // and a run in progress there updates as its state.json does (RunsDirectoryWatcher).
    // On a long history the list is read a screen at a time (issue 44): the newest
    // FirstReadRuns runs at construction, the others ReadRunsEach per turn of the event loop,
    // historyChanged() after each. historyComplete() says whether every run has been read.
    QList<RunInfo> history() const { return m_history; }
    bool historyComplete() const { return m_unread.isEmpty(); }
    void refresh();

    static constexpr int FirstReadRuns = 64;
    static constexpr int ReadRunsEach = 128;

    // Stops every active run (the GUI calls it on quit unless runs are detached).
    void stopAll();

signals:
    void runStarted(const QString &runId);
    void runStateChanged(const QString &runId, rankdeck::RunState state);
    void runFinished(const QString &runId, rankdeck::RunState state);
    void historyChanged();

private:
    // The shown state of the runs driven here, again (a verdict changed it, not RunState).
    void judgeDriven();
    void updateInfo(RunController *c);
    void adopt(RunController *c);
    bool drivenHere(const QString &runId) const;
    // Follows the recorded runs in progress that this process does not drive.
    void followRecorded();
    // Reads these recorded runs again; historyChanged() when what the list shows changed.
    void updateRecorded(const QStringList &directories);
    // Reads up to `count` more of the runs not read yet into the history (in its order).
    void readMore(int count);

    QString m_runsDirectory;
    RunsDirectoryWatcher *m_watcher = nullptr;
    QTimer m_judgeTimer; // judgeDriven() soon after a run driven here changed
    QHash<QString, QPointer<RunController>> m_controllers;
    QList<RunInfo> m_history;
    QStringList m_unread; // run directories not read yet, newest first
    QTimer m_readTimer;   // reads the next of them
};

} // namespace rankdeck
