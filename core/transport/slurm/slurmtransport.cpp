// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/slurm/slurmtransport.h"

#include "transport/slurm/slurmjobconnection.h"
#include "transport/ssh/sshthread.h"
#include "transport/threadcalls.h"

#include <QThread>

namespace rankdeck {

SlurmTransport::SlurmTransport(const Profile &profile, const QString &runId,
                               SshInteraction *interaction, QObject *parent)
    : Transport(parent), m_profile(profile), m_runId(runId), m_interaction(interaction)
{
    qRegisterMetaType<rankdeck::StreamKind>();
    qRegisterMetaType<rankdeck::RankExit>();
    m_fromConnection = new ThreadCalls(this);
}

SlurmTransport::~SlurmTransport()
{
    if (!m_thread)
        return;
    // shutdown() may scancel the job, which talks to the login: on the connection's thread.
    SlurmJobConnection *c = m_connection;
    m_toConnection->postBlocking([c] { c->shutdown(); });
    m_toConnection->endThread();
    delete m_connection;
    delete m_thread;
}

void SlurmTransport::onConnection(std::function<void(SlurmJobConnection *)> call)
{
    if (m_connection)
        m_toConnection->post([c = m_connection, call = std::move(call)] { call(c); });
}

void SlurmTransport::onPrepareFinished(const QString &error, const QString &binary,
                                       const QString &runDirectory)
{
    if (!error.isEmpty()) {
        emit prepareFailed(error);
        return;
    }
    m_binary = binary;
    m_runDirectory = runDirectory;
    emit prepared();
}

void SlurmTransport::onProgress(const QString &stage)
{
    emit nodeProgress(0, stage, -1);
}

void SlurmTransport::onJobSubmitted(const QString &jobId, int attempt, const QByteArray &script)
{
    m_jobId = jobId;
    emit artifact(QStringLiteral("job.a%1.sbatch").arg(attempt), script);
}

QString SlurmTransport::describe() const
{
    const SlurmSettings s = SlurmSettings::of(m_profile);
    QString d =
        QStringLiteral("slurm ") + (s.login.isEmpty() ? QStringLiteral("(this machine)") : s.login);
    if (!s.partition.isEmpty())
        d += QStringLiteral(" partition ") + s.partition;
    return d;
}

QString SlurmTransport::checkSummary() const
{
    const QString partition = SlurmSettings::of(m_profile).partition;
    return tr("sbatch, squeue and scancel answer, partition %1")
        .arg(partition.isEmpty() ? tr("(the cluster's default)") : partition);
}

QString SlurmTransport::nodeName(int nodeIndex) const
{
    // Its progress is the login's: sbatch and squeue there, not on the job's nodes.
    Q_UNUSED(nodeIndex);
    return SlurmSettings::of(m_profile).login.isEmpty()
               ? tr("this machine")
               : tr("login %1").arg(SlurmSettings::of(m_profile).login);
}

void SlurmTransport::setPollIntervalMs(int ms)
{
    m_pollIntervalMs = std::max(20, ms);
}

void SlurmTransport::setDetached(bool detached)
{
    m_detached = detached;
    onConnection([detached](SlurmJobConnection *c) { c->setDetached(detached); });
}

void SlurmTransport::prepare(const QString &localWorkerPath)
{
    if (!m_thread) {
        m_thread = new SshThread;
        m_thread->setObjectName(QStringLiteral("slurm login"));
        m_connection =
            new SlurmJobConnection(m_profile, m_runId, m_interaction, &m_interactionLock);
        m_connection->setPollIntervalMs(m_pollIntervalMs);
        m_connection->setDetached(m_detached);
        m_toConnection = ThreadCalls::movedWith(m_connection, m_thread);
        SlurmJobConnection *c = m_connection;
        relay(c, &SlurmJobConnection::prepareFinished, m_fromConnection, this,
              &SlurmTransport::onPrepareFinished);
        relay(c, &SlurmJobConnection::rankStarted, m_fromConnection, this, &Transport::rankStarted);
        relay(c, &SlurmJobConnection::rankOutput, m_fromConnection, this, &Transport::rankOutput);
        relay(c, &SlurmJobConnection::rankExited, m_fromConnection, this, &Transport::rankExited);
        relay(c, &SlurmJobConnection::progress, m_fromConnection, this,
              &SlurmTransport::onProgress);
        relay(c, &SlurmJobConnection::jobSubmitted, m_fromConnection, this,
              &SlurmTransport::onJobSubmitted);
        m_thread->start();
    }
    onConnection([localWorkerPath](SlurmJobConnection *c) { c->prepare(localWorkerPath); });
}

QString SlurmTransport::workerPath(int nodeIndex) const
{
    Q_UNUSED(nodeIndex);
    return m_binary;
}

void SlurmTransport::startRank(const RankLaunchSpec &spec)
{
    if (!m_connection) {
        RankExit e;
        e.exitCode = -1;
        e.detail = tr("failed to start: the Slurm transport was not prepared");
        reportExitLater(spec.rank, e);
        return;
    }
    onConnection([spec](SlurmJobConnection *c) { c->startRank(spec); });
}

void SlurmTransport::attachRank(const RankLaunchSpec &spec, int attempt, qint64 stdoutBytes,
                                qint64 stderrBytes)
{
    if (!m_connection) {
        Transport::attachRank(spec, attempt, stdoutBytes, stderrBytes);
        return;
    }
    onConnection([spec, attempt, stdoutBytes, stderrBytes](SlurmJobConnection *c) {
        c->attachRank(spec, attempt, stdoutBytes, stderrBytes);
    });
}

void SlurmTransport::writeStdin(int rank, const QByteArray &data)
{
    onConnection([rank, data](SlurmJobConnection *c) { c->writeStdin(rank, data); });
}

void SlurmTransport::closeStdin(int rank)
{
    onConnection([rank](SlurmJobConnection *c) { c->closeStdin(rank); });
}

void SlurmTransport::signalRank(int rank, int signal)
{
    onConnection([rank, signal](SlurmJobConnection *c) { c->signalRank(rank, signal); });
}

} // namespace rankdeck
