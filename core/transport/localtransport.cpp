// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/localtransport.h"

#include "util/clock.h"
#include "util/logging.h"
#include "util/translation.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTimer>

#include <chrono>
#include <csignal>
#include <unistd.h>

namespace rankdeck {

LocalTransport::LocalTransport(QObject *parent) : Transport(parent)
{
    m_flushTimer.setSingleShot(true);
    m_flushTimer.setInterval(OutputBatchMs);
    connect(&m_flushTimer, &QTimer::timeout, this, [this] { flushOutput(); });
}

LocalTransport::~LocalTransport()
{
    killAll();
    for (const Rank &rank : std::as_const(m_ranks)) {
        if (QProcess *p = rank.process) {
            p->disconnect(this);
            p->waitForFinished(2000);
        }
    }
}

QString LocalTransport::describe() const
{
    return tr("local");
}

void LocalTransport::prepare(const QString &localWorkerPath)
{
    const QFileInfo fi(localWorkerPath);
    m_workerPath = fi.absoluteFilePath();
    // Answer asynchronously, like every transport, so that callers can connect first.
    QTimer::singleShot(0, this, [this, fi] {
        if (!fi.exists())
            emit prepareFailed(tr("worker not found: %1").arg(fi.filePath()));
        else if (!fi.isFile() || !fi.isExecutable())
            emit prepareFailed(tr("worker is not executable: %1").arg(fi.filePath()));
        else {
            // Every local rank runs on this machine, by the launcher's own clock.
            NodeClock same;
            same.sameClock = true;
            emit nodeClock(0, same);
            emit prepared();
        }
    });
}

QString LocalTransport::workerPath(int) const
{
    return m_workerPath;
}

void LocalTransport::startRank(const RankLaunchSpec &spec)
{
    const int rank = spec.rank;
    if (m_ranks.contains(rank) && m_ranks[rank].process && !m_ranks[rank].exited) {
        RankExit e;
        e.exitCode = -1;
        e.timeUs = nowUs();
        e.detail = tr("failed to start: rank %1 is already running").arg(rank);
        QTimer::singleShot(0, this, [this, rank, e] { emit rankExited(rank, e); });
        return;
    }
    if (QProcess *old = m_ranks.value(rank).process)
        old->deleteLater();
    auto *proc = new QProcess(this);
    m_ranks[rank] = Rank{proc, nullptr, false};

    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (auto it = spec.environment.cbegin(); it != spec.environment.cend(); ++it)
        env.insert(it.key(), it.value());
    proc->setProcessEnvironment(env);
    proc->setProgram(spec.program);
    proc->setArguments(spec.arguments);
    if (!spec.workingDirectory.isEmpty())
        proc->setWorkingDirectory(spec.workingDirectory);
    // Private, whatever the umask: the supervisor refuses a run directory others may write to
    // (it puts code there, first on PYTHONPATH).
    if (!spec.nodeRunDirectory.isEmpty() && QDir().mkpath(spec.nodeRunDirectory))
        QFile::setPermissions(spec.nodeRunDirectory, QFileDevice::ReadOwner |
                                                         QFileDevice::WriteOwner |
                                                         QFileDevice::ExeOwner);
    // Own session and process group: signals then reach the rank's children too, and a terminal's
    // Ctrl+C reaches only the launcher, which stops the ranks in order.
    proc->setChildProcessModifier([] { ::setsid(); });

    // A program that prints and flushes every step wakes the launcher once a line; splitting,
    // recording and flushing each chunk on its own took 13-15 % of a core at 1,800 lines/s and
    // slowed two DDP ranks on two cores by ~10 % (docs/benchmarks.md, program step rate). The
    // chunks wait up to OutputBatchMs and go on together, in the order they came.
    connect(proc, &QProcess::readyReadStandardOutput, this, [this, proc, rank] {
        queueOutput(rank, StreamKind::Stdout, proc->readAllStandardOutput());
    });
    connect(proc, &QProcess::readyReadStandardError, this, [this, proc, rank] {
        queueOutput(rank, StreamKind::Stderr, proc->readAllStandardError());
    });
    connect(proc, &QProcess::started, this, [this, proc, rank] {
        // Now, before `finished`: QProcess has not reaped the child, so its pid is still its own.
        m_ranks[rank].held = std::make_shared<HeldProcess>(proc->processId());
        qCDebug(lcTransport) << "local rank" << rank << "started as pid" << proc->processId();
        emit rankStarted(rank, proc->processId());
    });
    connect(proc, &QProcess::errorOccurred, this, [this, proc, rank](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart || m_ranks[rank].process != proc ||
            m_ranks[rank].exited)
            return;
        m_ranks[rank].exited = true;
        RankExit e;
        e.exitCode = -1;
        e.timeUs = nowUs();
        e.detail = tr("failed to start %1: %2").arg(proc->program(), proc->errorString());
        emit rankExited(rank, e);
    });
    connect(proc, &QProcess::finished, this, [this, proc, rank](int, QProcess::ExitStatus) {
        if (m_ranks[rank].process == proc)
            onFinished(rank);
    });
    qCDebug(lcTransport).noquote() << "local rank" << rank << "starting" << proc->program()
                                   << proc->arguments().join(QLatin1Char(' '));
    proc->start(QIODevice::ReadWrite);
}

void LocalTransport::onFinished(int rank)
{
    Rank &r = m_ranks[rank];
    QProcess *proc = r.process;
    if (!proc || r.exited)
        return;
    const qint64 t = nowUs();
    // QProcess has just reaped the rank: from here on its pid, its group's id, may be reused.
    const qint64 endTicks = bootTicksNow();
    // Drain what is queued and still buffered, so that the last lines arrive before the exit.
    flushOutput(rank);
    const QByteArray out = proc->readAllStandardOutput();
    if (!out.isEmpty())
        emit rankOutput(rank, StreamKind::Stdout, out);
    const QByteArray err = proc->readAllStandardError();
    if (!err.isEmpty())
        emit rankOutput(rank, StreamKind::Stderr, err);
    r.exited = true;
    // Whatever the rank left in its process group goes with it. The kernel does not reuse the
    // group's id while the group has members; once it is empty a new group may get the id, so it
    // is signalled only while a process of the rank's own time is in it.
    if (r.held) {
        QString why;
        if (!signalOrphanedGroup(r.held->identity(), endTicks, SIGKILL, &why) && !why.isEmpty())
            qCWarning(lcTransport, "local rank %d: not killing what is left of its group: %s", rank,
                      qPrintable(why));
    }
    RankExit e;
    e.timeUs = t;
    if (proc->exitStatus() == QProcess::CrashExit) {
        e.crashed = true;
        // On Unix QProcess reports the terminating signal as the exit code of a crashed process.
        e.signal = proc->exitCode();
    } else {
        e.exitCode = proc->exitCode();
    }
    emit rankExited(rank, e);
}

void LocalTransport::queueOutput(int rank, StreamKind stream, const QByteArray &chunk)
{
    if (chunk.isEmpty())
        return;
    // Order matters within a rank only (its stdout and stderr interleave); between ranks the
    // batch's order is the order their first chunks came in.
    const auto last = m_lastPending.constFind(rank);
    if (last != m_lastPending.cend() && m_pending.at(*last).stream == stream) {
        m_pending[*last].bytes += chunk;
    } else {
        m_lastPending.insert(rank, m_pending.size());
        m_pending.append(Pending{rank, stream, chunk});
    }
    if (!m_flushTimer.isActive())
        m_flushTimer.start();
}

void LocalTransport::flushOutput(int rank)
{
    // Taken out first: a slot of rankOutput may start or stop ranks, and so queue more.
    QList<Pending> out;
    if (rank < 0) {
        out.swap(m_pending);
    } else {
        QList<Pending> kept;
        for (Pending &p : m_pending)
            (p.rank == rank ? out : kept).append(std::move(p));
        m_pending.swap(kept);
    }
    m_lastPending.clear();
    for (qsizetype i = 0; i < m_pending.size(); ++i)
        m_lastPending.insert(m_pending.at(i).rank, i);
    for (const Pending &p : std::as_const(out))
        emit rankOutput(p.rank, p.stream, p.bytes);
}

void LocalTransport::writeStdin(int rank, const QByteArray &data)
{
    const Rank r = m_ranks.value(rank);
    // While the process is still starting QProcess buffers the data and writes it once the
    // child runs, so a `stop` sent right after startRank() is not lost.
    if (r.process && !r.exited && r.process->state() != QProcess::NotRunning)
        r.process->write(data);
}

void LocalTransport::closeStdin(int rank)
{
    const Rank r = m_ranks.value(rank);
    if (r.process && !r.exited)
        r.process->closeWriteChannel();
}

void LocalTransport::signalRank(int rank, int signal)
{
    const Rank r = m_ranks.value(rank);
    if (r.held && !r.exited && !r.held->signalGroup(signal))
        r.held->signal(signal); // not yet in its own group (setsid not run yet)
}

qint64 LocalTransport::rankStartTicks(int rank) const
{
    const Rank r = m_ranks.value(rank);
    return r.held ? r.held->identity().startTicks : 0;
}

void LocalTransport::killAll()
{
    for (const Rank &rank : std::as_const(m_ranks)) {
        if (rank.held && !rank.exited) {
            rank.held->signalGroup(SIGKILL);
            rank.held->signal(SIGKILL);
        }
    }
}

} // namespace rankdeck
