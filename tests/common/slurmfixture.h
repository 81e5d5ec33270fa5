// SPDX-License-Identifier: GPL-3.0-or-later
//
// SlurmFixture: a real Slurm cluster on this machine for tests and benchmarks.
//
// Debian's slurm-wlm in multiple-slurmd mode: one munged with its own key and socket, one
// slurmctld and N slurmd (`slurmd -N n1`, `-N n2`, …) on this host, every file (slurm.conf,
// state, spool, logs) in one temporary directory, ports chosen free at start. Node names
// n1…nN are not host names (NodeHostname is `hostname -s`, NodeAddr 127.0.0.1), as on clusters
// whose node names do not resolve. Commands find the cluster through SLURM_CONF: start() sets it
// in this process, so the launcher's own commands and every QProcess child see it, as a user's
// shell would. The daemons run in the foreground as this process's children; stop() (and the
// destructor) cancels every job, waits for them to end, stops every daemon and restores
// SLURM_CONF.
//
// Needs root (slurmd runs jobs as the submitting user) and the binaries of slurm-wlm and munge;
// unavailableReason() says what is missing, tests QSKIP with it.
//
// Typical use:
//     SlurmFixture slurm;
//     if (const QString why = SlurmFixture::unavailableReason(); !why.isEmpty())
//         QSKIP(qPrintable(why));
//     QVERIFY2(slurm.start(2), qPrintable(slurm.lastError()));
//     profile: transport "slurm", partition slurm.partition(), nodes 2
#pragma once

#include <QByteArray>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <memory>
#include <vector>

class QProcess;

class SlurmFixture
{
public:
    SlurmFixture();
    ~SlurmFixture();
    SlurmFixture(const SlurmFixture &) = delete;
    SlurmFixture &operator=(const SlurmFixture &) = delete;

    // Why a Slurm cluster cannot run here (not root, a binary missing); empty when it can.
    static QString unavailableReason();

    // Writes slurm.conf (cpusPerNode CPUs claimed per node), starts munged, slurmctld and
    // nodeCount slurmd, and waits until sinfo shows every node idle. false and lastError()
    // (with the end of the daemons' logs) otherwise.
    bool start(int nodeCount, int cpusPerNode = 4);
    // Cancels every job, waits for them to end, stops the daemons. Idempotent.
    void stop();
    QString lastError() const { return m_error; }

    QString partition() const { return QStringLiteral("debug"); }
    int nodeCount() const { return m_nodes; }
    QString slurmConf() const;
    QString directory() const { return m_dir.path(); }

    // Runs a Slurm command (squeue, scontrol, scancel, …) against the cluster; its stdout, or
    // empty when it failed (*error, if given, then has its stderr).
    QByteArray command(const QString &program, const QStringList &args,
                       QString *error = nullptr) const;
    // Ids of the jobs slurmctld knows in the given states (squeue -t), pending and running ones
    // if empty.
    QStringList jobs(const QString &states = QString()) const;
    // Waits until no job is pending, running or completing; false when some still are.
    bool waitForNoJobs(int timeoutMs) const;
    // The last lines of the controller's and the nodes' logs, for failure messages.
    QString logTail(int lines = 15) const;

private:
    bool writeConfig(int cpusPerNode);
    bool startDaemon(const QString &program, const QStringList &args);
    bool waitForIdle(int timeoutMs);

    QTemporaryDir m_dir;
    QString m_error;
    int m_nodes = 0;
    QByteArray m_previousConf;
    bool m_hadPreviousConf = false;
    bool m_started = false;
    std::vector<std::unique_ptr<QProcess>> m_daemons; // started in order, stopped in reverse
};
