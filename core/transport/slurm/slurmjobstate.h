// SPDX-License-Identifier: GPL-3.0-or-later
//
// What Slurm says about one job, from `scontrol -o show job ID` (one Key=Value line) while
// slurmctld knows it, or `sacct -n -P -X -j ID -o State,ExitCode,Reason` after (where accounting
// exists), and what its end means for the ranks that did not report an exit of their own.
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace rankdeck {

struct SlurmJobState
{
    enum class Phase
    {
        Unknown,  // no answer yet, or slurmctld forgot the job and there is no accounting
        Pending,  // PENDING, REQUEUED, CONFIGURING, RESIZING, SUSPENDED
        Running,  // RUNNING, COMPLETING (the step may still be ending)
        Finished, // any end state
    };

    QString jobId;
    QString state;  // JobState as Slurm spells it ("PENDING", "CANCELLED", …)
    QString reason; // Reason ("Resources", "Priority", "None", …)
    int exitCode = 0;
    int exitSignal = 0;
    int restarts = 0;
    QString nodeList;
    QString timeLimit;
    bool known = false; // the answer named the job

    Phase phase() const;
    // An end the job did not choose itself: Slurm (or someone outside RankDeck) ended it.
    bool endedByCluster() const;

    // One `scontrol -o show job` line; known is false when it is an error ("Invalid job id").
    static SlurmJobState fromScontrol(const QByteArray &line);
    // One `sacct -n -P -X -o State,ExitCode,Reason` line; "CANCELLED by 0" is CANCELLED.
    static SlurmJobState fromSacct(const QString &jobId, const QByteArray &line);

    // The job id in `sbatch --parsable`'s answer ("12", or "12;cluster" in a federation) or in
    // the job.a<A>.id file written from it: its last non-empty line, up to the ';'. Empty when
    // that is not a job id (digits only, at most 10: Slurm's ids are 32-bit), e.g. a site's
    // sbatch wrapper that prints a banner after it, or a file cut short.
    static QString jobIdFromSbatch(const QByteArray &answer);

    // "pending (Resources), 2nd in the queue" for the run's progress line.
    QString describePending(int queuePosition) const;
    // Why a rank that was still running ended with the job, naming the cause:
    // "Slurm job 12 was cancelled outside RankDeck (scancel)", "… reached its time limit
    // (TIMEOUT, 0:01:00)", "… lost its node (NODE_FAIL)", …; the word "lost" where the rank's
    // node went away, so the run controller marks it lost.
    QString describeEnd() const;
};

} // namespace rankdeck
