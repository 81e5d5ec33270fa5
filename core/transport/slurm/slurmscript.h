// SPDX-License-Identifier: GPL-3.0-or-later
//
// The shell text the Slurm transport writes to the cluster: the batch script that sbatch runs,
// the wrapper every task of its one srun step runs, each rank's spec, and the poll command that
// reads the job's state and every rank's new bytes in one go. Plain text builders, no I/O, so
// the tests can run them with the local /bin/sh.
//
// Files in the run's directory on the shared file system (<base> = rank<R>.a<attempt>):
//   job.a<A>.sbatch     the batch script as submitted (also in the local run record)
//   job.a<A>.id         the job id sbatch answered (a re-attaching launcher reads it)
//   job.a<A>.out        the batch script's own output (srun's messages)
//   rank.sh             the task wrapper (the same for every rank and attempt)
//   <base>.spec         the rank's program, arguments, environment and directory (sourced)
//   <base>.out, .err    its stdout and stderr, written by srun (%t) with --open-mode=append
//   <base>.in           its stdin: the launcher appends control commands, the wrapper tails it
//   <base>.pid          "<pid> <node name> <address>" once the program runs
//   <base>.exit         its wait status once it ended (128+N: killed by signal N)
//   <base>.sig.<n>      a signal number the launcher asks the wrapper to deliver
//   master.a<A>         rank 0's address, published by rank 0's wrapper
//
// No port race: rank 0 starts with MASTER_PORT=0 and binds a free port itself (the worker and
// the supervisor report it in their `store` event); the launcher then writes the other ranks'
// specs with that port, which their wrappers wait for. Two jobs on one node never collide, as
// the kernel picks the port. MASTER_ADDR is what rank 0's wrapper published: its node's NodeAddr
// from `scontrol show node` (node names need not resolve), else its first address.
#pragma once

#include "config/profile.h"
#include "transport/slurm/slurmsettings.h"
#include "transport/transport.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

namespace rankdeck {

class SlurmScript
{
public:
    struct Job
    {
        QString runId;
        QString runDirectory; // absolute, on the shared file system
        int attempt = 1;
        SlurmSettings settings;
    };

    // The sbatch script of one attempt: #SBATCH lines from the profile, then one srun step with
    // one task per rank, --kill-on-bad-exit=1, per-rank files (%t), --open-mode=append.
    static QByteArray batchScript(const Job &job);
    // The task wrapper, run by srun as `/bin/sh rank.sh RUNDIR ATTEMPT`.
    static QByteArray rankWrapper();
    // What the wrapper sources for a rank: its directory, environment and command line.
    // libraryDirectory is prepended to LD_LIBRARY_PATH when set.
    // sha256: what the program must hash to on the node (the deployed binary's); the wrapper
    // refuses to run it otherwise. Empty: not checked (a program of the user's).
    static QByteArray rankSpec(const RankLaunchSpec &spec, const QString &libraryDirectory,
                               const QString &sha256 = QString());
    static QString baseName(int rank, int attempt);

    struct PollRank
    {
        QString baseName;
        qint64 stdoutOffset = 0;
        qint64 stderrOffset = 0;
    };
    // One command that prints the job's `scontrol -o show job` line, the queue of pending jobs
    // (when withQueue), and per rank its pid and exit files and the bytes of .out and .err after
    // the offsets (at most maxBytes each), framed so that parsePoll() can split them.
    static QByteArray pollCommand(const QString &runDirectory, const QString &jobId,
                                  const QString &partition, bool withQueue,
                                  const QList<PollRank> &ranks, qint64 maxBytes = 1 << 20);

    struct PollReply
    {
        struct Rank
        {
            QString baseName;
            qint64 pid = 0;      // 0: not running yet
            QString node;        // Slurm's node name
            bool exited = false; // the exit file was there before the bytes were read
            int status = 0;      // its content
            QByteArray out;
            QByteArray err;
        };
        QByteArray jobLine;       // scontrol's answer (or its error)
        QStringList pendingQueue; // job ids pending in the partition, by priority
        QList<Rank> ranks;
    };
    static bool parsePoll(const QByteArray &output, PollReply *reply, QString *error);
};

} // namespace rankdeck
