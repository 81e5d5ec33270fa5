// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/localtransport.h"

#include "transport/rankoutputpipe.h"
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

#include <cerrno>
#include <chrono>
#include <csignal>
#include <sys/types.h>
#include <unistd.h>

namespace rankdeck {

LocalTransport::LocalTransport(QObject *parent) : Transport(parent) {}

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
    if (m_ranks.contains(rank)) {
        if (QProcess *old = m_ranks[rank].process)
            old->deleteLater();
        closeOutput(m_ranks[rank]);
    }
    // A program that prints and flushes every step woke the launcher once a line through
    // QProcess's channels: 13-15 % of a core at 1,800 lines/s, the ranks' own CPU on a machine
    // whose cores they use (docs/benchmarks.md, "Five goals missed"). Pipes of our own are read
    // at most every OutputBatchMs while they trickle.
    auto *out = new RankOutputPipe(OutputBatchMs, this);
    auto *err = new RankOutputPipe(OutputBatchMs, this);
    if (!out->isValid() || !err->isValid()) {
        const QString why = !out->isValid() ? out->errorString() : err->errorString();
        delete out;
        delete err;
        RankExit e;
        e.exitCode = -1;
        e.timeUs = nowUs();
        e.detail = tr("failed to start: no pipe for its output (%1)").arg(why);
        QTimer::singleShot(0, this, [this, rank, e] { emit rankExited(rank, e); });
        return;
    }
    connect(out, &RankOutputPipe::output, this, [this, rank](const QByteArray &bytes) {
        emit rankOutput(rank, StreamKind::Stdout, bytes);
    });
    connect(err, &RankOutputPipe::output, this, [this, rank](const QByteArray &bytes) {
        emit rankOutput(rank, StreamKind::Stderr, bytes);
    });
    auto *proc = new QProcess(this);
    m_ranks[rank] = Rank{proc, 0, false, out, err};
    proc->setStandardOutputFile(QProcess::nullDevice());
    proc->setStandardErrorFile(QProcess::nullDevice());

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
    // Ctrl+C reaches only the launcher, which stops the ranks in order. QProcess has put its
    // channels in place when the modifier runs: fds 1 and 2 become our pipes.
    const int outFd = out->writeEnd();
    const int errFd = err->writeEnd();
    proc->setChildProcessModifier([outFd, errFd] {
        ::setsid();
        ::dup2(outFd, STDOUT_FILENO);
        ::dup2(errFd, STDERR_FILENO);
    });

    connect(proc, &QProcess::started, this, [this, proc, rank] {
        m_ranks[rank].pid = proc->processId();
        qCDebug(lcTransport) << "local rank" << rank << "started as pid" << proc->processId();
        emit rankStarted(rank, proc->processId());
    });
    connect(proc, &QProcess::errorOccurred, this, [this, proc, rank](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart || m_ranks[rank].process != proc ||
            m_ranks[rank].exited)
            return;
        m_ranks[rank].exited = true;
        closeOutput(m_ranks[rank]);
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
    // The child has its copies now (QProcess forks within start()): the pipes end with them.
    out->closeWriteEnd();
    err->closeWriteEnd();
}

void LocalTransport::onFinished(int rank)
{
    Rank &r = m_ranks[rank];
    QProcess *proc = r.process;
    if (!proc || r.exited)
        return;
    const qint64 t = nowUs();
    // Drain what is still in the pipes, so that the last lines arrive before the exit.
    closeOutput(r);
    r.exited = true;
    // Whatever the rank left in its process group goes with it (the group id is the pid we just
    // reaped, which the kernel does not reuse while the group has members).
    if (r.pid > 0)
        ::kill(-pid_t(r.pid), SIGKILL);
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

void LocalTransport::closeOutput(Rank &rank)
{
    // Whatever the rank's children still write after it ended goes nowhere, as it did when
    // QProcess's channels closed with the process.
    for (QPointer<RankOutputPipe> *pipe : {&rank.out, &rank.err}) {
        if (RankOutputPipe *p = *pipe) {
            p->drain();
            p->disconnect(this);
            p->deleteLater();
        }
        *pipe = nullptr;
    }
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
    if (r.pid > 0 && !r.exited) {
        if (::kill(-pid_t(r.pid), signal) != 0 && errno == ESRCH)
            ::kill(pid_t(r.pid), signal); // not yet in its own group (setsid not run yet)
    }
}

void LocalTransport::killAll()
{
    for (const Rank &rank : std::as_const(m_ranks)) {
        if (rank.pid > 0 && !rank.exited) {
            ::kill(-pid_t(rank.pid), SIGKILL);
            ::kill(pid_t(rank.pid), SIGKILL);
        }
    }
}

} // namespace rankdeck
