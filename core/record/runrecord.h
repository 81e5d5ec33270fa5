// SPDX-License-Identifier: GPL-3.0-or-later
//
// A run's directory, $XDG_DATA_HOME/rankdeck/runs/<run-id>/ (mode 0700), written incrementally
// so that a crash of the launcher loses nothing already received:
//   run.json        id, name, creation time, profile and config snapshot (written once)
//   profile.toml    the profile as it was at launch, human-readable
//   state.json      run and rank states, root cause, attempts (replaced atomically on change);
//                   detachable runs add "detach", "detached" and "streams" (per rank: attempt,
//                   stdout_bytes, stderr_bytes already in rank-<R>.log, for a re-attach)
//   failure.json    the failure report (FailureReport::toJson), failure.txt the same for people
//   rank-<R>.log …  every line each rank printed, as received (LogStore)
//   metrics.csv     every metric point (MetricsStore)
//   launcher.log    what the launcher itself did (stop requests, restarts, hang flags)
//   stop-request    created by `rankdeck-cli stop`; the launcher that owns the run polls for it
//   kill-request    the same for a kill (the GUI's Kill on a run it follows)
//   stacks-request  created by `rankdeck-cli stacks`: the launcher asks every rank for its stacks
//   profile-request created by `rankdeck-cli profile`: "<seconds> [rank …]", the launcher records
//                   that long a profile of every rank (or of those) into profiles/<id>/
//   stacks-rank-<R>.txt  every stack dump a rank sent (hang detection, requests), appended
//   node/           the ranks' own run directory for local runs (crash reports, NCCL dumps)
//   .reserve        room kept while the run is live, for the record's last words on a full disk
#pragma once

#include "config/profile.h"
#include "config/trainingconfig.h"
#include "record/runstate.h"
#include "record/shownstate.h"

#include <QJsonObject>
#include <QList>
#include <QString>

namespace rankdeck {

// What the run list shows, read from run.json + state.json.
struct RunInfo
{
    QString id;
    QString name;
    QString directory;
    QString profileName;
    RunState state = RunState::Preparing;
    bool launcherGone = false; // not finished, but the launcher that owned it is not running
    bool detachable = false;   // launched with detach (SSH): ranks outlive the launcher
    bool detached = false; // left running by its launcher; RunController::reattach() takes it over
    qint64 createdUs = 0;
    qint64 endedUs = 0;
    int worldSize = 0;
    int attempt = 0;
    QString rootCause; // one-line summary, empty when none
    QString slow;      // why a running job is slow (its straggler and cause), empty when none
    bool hung = false; // flagged hung when it ended (or now): `runs` says "stopped (hung)"
    // The one state a person reads (record/shownstate.h): "stuck", "desynced", not "running".
    ShownState shown = ShownState::Unknown;
    // Its ranks, alike ones as ranges ("ranks 0–16, 18–511 finished; rank 17 failed (exit 1)",
    // RankGroups::summary()); how many groups that is (0: no ranks recorded yet).
    QString rankSummary;
    int rankGroups = 0;
};

// A directory in the runs directory that is not a readable run (run.json missing, cut or
// garbage): listed so that it does not silently vanish from `runs`.
struct BrokenRun
{
    QString id; // the directory's name
    QString directory;
    QString problem;
};

class RunRecord
{
public:
    // $XDG_DATA_HOME/rankdeck/runs (~/.local/share/rankdeck/runs).
    static QString defaultRunsDirectory();
    // "20261129-142301-linear-3fa2": sortable by time, readable, unique.
    static QString newRunId(const QString &name);

    // Creates <runsDirectory>/<runId> and writes the snapshots.
    bool create(const QString &runsDirectory, const QString &runId, const QString &name,
                const Profile &profile, const TrainingConfig &config, QString *error);
    // Opens an existing run directory (to show or follow it).
    bool open(const QString &directory, QString *error);

    QString id() const { return m_id; }
    QString name() const { return m_name; }
    QString directory() const { return m_directory; }
    QString nodeRunDirectory() const;
    const Profile &profile() const { return m_profile; }
    const TrainingConfig &config() const { return m_config; }
    qint64 createdUs() const { return m_createdUs; }
    // Which RankDeck launched the run (run.json "rankdeck" and "rankdeck_commit"; empty in a
    // record that predates them), so that `show` can say when another version made it.
    QString launcherVersion() const { return m_launcherVersion; }
    QString launcherCommit() const { return m_launcherCommit; }

    // state.json, replaced atomically.
    bool writeState(const QJsonObject &state, QString *error = nullptr);
    QJsonObject readState() const;
    bool writeFailureReport(const QJsonObject &json, const QString &text);
    QJsonObject readFailureReport() const;
    QString readFailureText() const;
    void appendLauncherLog(const QString &line);

    // Room kept for the record's last words: a launcher whose disk fills up mid-run releases it
    // to write state.json, failure.txt and launcher.log saying so. create() makes it (a disk
    // too full for it fails the launch there); releaseReserve() frees it, at the end or when
    // the disk is full.
    static constexpr qint64 kReserveBytes = qint64(256) * 1024;
    bool releaseReserve();

    QString stopRequestPath() const;
    bool requestStop(QString *error) const;
    bool stopRequested() const;
    // kill-request: the owning launcher SIGKILLs every rank (the GUI's Kill on a run another
    // process launched).
    bool requestKill(QString *error) const;
    bool killRequested() const;
    // `rankdeck-cli stacks` asks the launcher for a stack dump of every rank the same way;
    // answers land in stacks-rank-<R>.txt.
    bool requestStackDump(QString *error) const;
    bool takeStackDumpRequest() const;
    // `rankdeck-cli profile` and a second window ask the owning launcher for a profile; it
    // takes the request (false: none, or not readable) and records into profilesDirectory().
    bool requestProfile(int seconds, const QList<int> &ranks, QString *error) const;
    bool takeProfileRequest(int *seconds, QList<int> *ranks) const;
    QString profilesDirectory() const;
    QString stacksPath(int rank) const;
    // Adds one stack dump of the rank to stacks-rank<R>.txt, under a "=== <time> (<reason>)" line.
    void appendStacks(int rank, qint64 timeUs, const QString &reason, const QString &stacks) const;

    // A file a transport hands over for the record (Transport::artifact, e.g. the Slurm batch
    // script job.a1.sbatch); the name must be a plain file name. artifacts(): their names.
    bool writeArtifact(const QString &fileName, const QByteArray &content, QString *error) const;
    QStringList artifacts() const;

    RunInfo info() const;

    // Every run in the directory, newest first. Broken directories are skipped here and listed
    // by listBroken().
    static QList<RunInfo> list(const QString &runsDirectory);
    static QList<BrokenRun> listBroken(const QString &runsDirectory);
    // Both in one pass (each run.json is read once): what `runs` prints.
    struct Listing
    {
        QList<RunInfo> runs;
        QList<BrokenRun> broken;
    };
    static Listing scan(const QString &runsDirectory);
    // The run directories of runsDirectory in list()'s reading order (newest id first), none of
    // them read yet: a front end reads the first screen of them at once and the rest later.
    static QStringList directories(const QString &runsDirectory);
    // One run directory as list() reads it; false when it is not a readable run.
    static bool read(const QString &directory, RunInfo *info);
    // Newest first, as list() orders runs: where `run` goes in `runs` (already in that order).
    static qsizetype insertPosition(const QList<RunInfo> &runs, const RunInfo &run);
    // A run id, or a run name (the newest run of that name).
    static QString resolve(const QString &runsDirectory, const QString &idOrName, QString *error);

private:
    void openParsed(const QString &directory, const QJsonObject &run);

    QString m_id;
    QString m_name;
    QString m_directory;
    Profile m_profile;
    TrainingConfig m_config;
    qint64 m_createdUs = 0;
    QString m_launcherVersion;
    QString m_launcherCommit;
};

} // namespace rankdeck
