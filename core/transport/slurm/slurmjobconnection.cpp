// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/slurm/slurmjobconnection.h"

#include "transport/slurm/slurmlogin.h"
#include "transport/ssh/sshnodedeployer.h"
#include "util/clock.h"
#include "util/logging.h"
#include "util/printabletext.h"
#include "util/shellquote.h"
#include "util/translation.h"

#include <QFileInfo>
#include <QRandomGenerator>
#include <QThread>
#include <QTimer>

#include <csignal>

namespace rankdeck {

namespace {

// The login check in one command: the client commands, the controller (sinfo answers with the
// partitions), the partition, then (with a binary to deploy) the directories and whether the
// binary is there. Answers key=value lines.
//   $1 shared dir, $2 run dir, $3 partition (may be empty), $4 binary path to look for (may be
//   empty), $5 its SHA-256. The binary counts as there only with that SHA-256 (its name is
//   public, so a file under it proves nothing), and the shared directory, its bin/ and runs/
//   must be this user's and writable by nobody else: another user who can write there could
//   put a program that every rank runs (issue 29).
const char kCheck[] = R"SH(
for c in sbatch squeue scancel scontrol sinfo; do
  command -v "$c" >/dev/null 2>&1 || { echo "missing=$c"; echo "path=$PATH"; exit 0; }
done
if ! parts=$(sinfo -h -o %R 2>&1); then echo "slurm-error=$(printf '%s' "$parts" | tr '\n' ' ' | head -c 600)"; exit 0; fi
echo "partitions=$(printf '%s' "$parts" | sort -u | tr '\n' ' ')"
if [ -n "$3" ] && ! scontrol -o show partition "$3" >/dev/null 2>&1; then echo "no-partition=$3"; exit 0; fi
if [ -n "$4" ]; then
  (umask 077; mkdir -p -- "$1/bin" "$2") || { echo "mkdir-error=$2"; exit 0; }
  for x in "$1" "$1/bin" "$1/runs"; do
    if [ -L "$x" ] || [ -n "$(find "$x" -prune \( -perm -0002 -o -perm -0020 \) -print)" ] ||
       { [ "$x" != "$1" ] && [ -n "$(find "$x" -prune ! -user "$(id -u)" -print)" ]; }; then
      echo "shared-error=$x"; exit 0
    fi
  done
  if [ -f "$4" ] && [ -x "$4" ] && [ ! -L "$4" ]; then
    if command -v sha256sum >/dev/null 2>&1; then h=$(sha256sum <"$4")
    elif command -v shasum >/dev/null 2>&1; then h=$(shasum -a 256 <"$4")
    else h=$(openssl dgst -sha256 -r <"$4"); fi
    h=${h%% *}; h=${h##*= }
    [ "$h" = "$5" ] && echo "binary=present"
  fi
fi
echo "ok=1"
)SH";

QByteArray sh(const QByteArray &script, const QStringList &args)
{
    QByteArray cmd = "/bin/sh -c " + shell::quote(script) + " rankdeck";
    for (const QString &a : args)
        cmd += ' ' + shell::quote(a);
    return cmd;
}

QMap<QString, QString> keyValues(const QByteArray &out)
{
    QMap<QString, QString> kv;
    for (const QByteArray &line : out.split('\n')) {
        const qsizetype eq = line.indexOf('=');
        if (eq > 0)
            kv.insert(QString::fromUtf8(line.left(eq)),
                      QString::fromUtf8(line.mid(eq + 1)).trimmed());
    }
    return kv;
}

constexpr int kHoldPolls = 4;      // how long an unexplained SIGTERM/SIGKILL waits for the job
constexpr int kMaxHoldPolls = 100; // ... while the job is COMPLETING
constexpr qint64 kMaxPollBytes = 1 << 20;

} // namespace

SlurmJobConnection::SlurmJobConnection(const Profile &profile, const QString &runId,
                                       SshInteraction *interaction, QMutex *interactionLock)
    : m_profile(profile), m_runId(runId),
      m_login(std::make_unique<SlurmLogin>(profile, interaction, interactionLock))
{
    const QString lib = profile.libtorchPath.trimmed();
    if (!lib.isEmpty() && lib != QLatin1String("python"))
        m_libraryDirectory = lib;
}

SlurmJobConnection::~SlurmJobConnection() = default;

QString SlurmJobConnection::rankPath(int rank, const QString &suffix) const
{
    return m_runDirectory + QLatin1Char('/') + m_ranks.value(rank).baseName + suffix;
}

void SlurmJobConnection::prepare(const QString &localBinary)
{
    if (!m_timer) {
        m_timer = new QTimer(this);
        m_timer->setInterval(m_pollIntervalMs);
        connect(m_timer, &QTimer::timeout, this, &SlurmJobConnection::poll);
    }
    QString error;
    QString binary;
    emit progress(m_login->isRemote() ? tr("connecting") : tr("checking Slurm"));
    if (!checkLogin(localBinary, &binary, &error)) {
        emit prepareFinished(error, QString(), QString());
        return;
    }
    m_binary = binary;
    emit prepareFinished(QString(), m_binary, m_runDirectory);
}

bool SlurmJobConnection::checkLogin(const QString &localBinary, QString *binary, QString *error)
{
    const QString where = m_login->describe();
    if (!m_login->open(error))
        return false;
    const QString shared = m_login->expand(SlurmSettings::of(m_profile).effectiveSharedDir());
    m_runDirectory = shared + QStringLiteral("/runs/") + m_runId;
    QString target;
    QByteArray sha;
    if (!localBinary.isEmpty()) {
        sha = SshNodeDeployer::sha256Hex(localBinary, error);
        if (sha.isEmpty())
            return false;
        target = shared + QStringLiteral("/bin/") + QFileInfo(localBinary).fileName() +
                 QLatin1Char('-') + QString::fromLatin1(sha);
        m_binarySha256 = QString::fromLatin1(sha);
    }
    const SshExecResult r =
        m_login->run(sh(kCheck, {shared, m_runDirectory, SlurmSettings::of(m_profile).partition,
                                 target, QString::fromLatin1(sha)}));
    const QMap<QString, QString> kv = keyValues(r.out);
    if (!r.error.isEmpty()) {
        *error = tr("%1: %2").arg(where, r.error);
        return false;
    }
    if (kv.contains(QStringLiteral("missing"))) {
        *error =
            tr("%1: %2 is not there (not on PATH: %3); install Slurm's client commands "
               "there or use a login node that has them")
                .arg(where, kv.value(QStringLiteral("missing")), kv.value(QStringLiteral("path")));
        return false;
    }
    if (kv.contains(QStringLiteral("slurm-error"))) {
        *error =
            tr("%1: Slurm does not answer: %2").arg(where, kv.value(QStringLiteral("slurm-error")));
        return false;
    }
    if (kv.contains(QStringLiteral("no-partition"))) {
        *error = tr("%1: partition \"%2\" does not exist (the cluster has: %3)")
                     .arg(where, SlurmSettings::of(m_profile).partition,
                          kv.value(QStringLiteral("partitions")).trimmed());
        return false;
    }
    if (kv.contains(QStringLiteral("mkdir-error"))) {
        *error = tr("%1: cannot create %2 (slurm.shared_dir)").arg(where, m_runDirectory);
        return false;
    }
    if (kv.contains(QStringLiteral("shared-error"))) {
        *error = tr("%1: refusing %2 (slurm.shared_dir): it is not a directory of this user that "
                    "only this user may write to, so another user could put a program there "
                    "that every rank would run")
                     .arg(where, kv.value(QStringLiteral("shared-error")));
        return false;
    }
    if (!kv.contains(QStringLiteral("ok"))) {
        *error = tr("%1: the Slurm check failed: %2").arg(where, r.describeFailure());
        return false;
    }
    if (!target.isEmpty() && !kv.contains(QStringLiteral("binary"))) {
        emit progress(tr("uploading %1 to %2").arg(QFileInfo(localBinary).fileName(), shared));
        const QString part =
            target + QStringLiteral(".part%1").arg(QRandomGenerator::global()->generate(), 8, 16,
                                                   QLatin1Char('0'));
        if (!m_login->upload(localBinary, part, error)) {
            *error = tr("%1: %2").arg(where, *error);
            return false;
        }
        // What arrived, by its hash, before it takes the name every rank runs.
        const SshExecResult mv = m_login->run(
            sh("if command -v sha256sum >/dev/null 2>&1; then h=$(sha256sum <\"$1\"); "
               "elif command -v shasum >/dev/null 2>&1; then h=$(shasum -a 256 <\"$1\"); "
               "else h=$(openssl dgst -sha256 -r <\"$1\"); fi; h=${h%% *}; h=${h##*= }; "
               "[ \"$h\" = \"$3\" ] || { rm -f -- \"$1\"; echo \"SHA-256 $h, not $3\" >&2; "
               "exit 1; }; chmod 755 -- \"$1\" && mv -f -- \"$1\" \"$2\"",
               {part, target, QString::fromLatin1(sha)}));
        if (!mv.ok()) {
            *error = tr("%1: cannot move the worker into %2: %3")
                         .arg(where, target, mv.describeFailure());
            return false;
        }
    }
    *binary = target;
    // A check (or a re-attach) deploys nothing: the run directory has its wrapper already.
    if (localBinary.isEmpty())
        return true;
    return writeFile(m_runDirectory + QStringLiteral("/rank.sh"), SlurmScript::rankWrapper(),
                     error);
}

bool SlurmJobConnection::writeFile(const QString &path, const QByteArray &content, QString *error)
{
    // Atomically: a wrapper polling for a spec must never read half of one. Private: a spec
    // holds the rank's environment, which may carry tokens.
    const SshExecResult r = m_login->run(
        sh(R"(umask 077; cat >"$1.tmp" && mv -f -- "$1.tmp" "$1")", {path}), 30000, content);
    if (!r.ok()) {
        *error = tr("%1: cannot write %2: %3").arg(m_login->describe(), path, r.describeFailure());
        return false;
    }
    return true;
}

void SlurmJobConnection::startRank(const RankLaunchSpec &spec)
{
    if (m_shutDown)
        return;
    // Rank 0 opens an attempt (the controller starts it first); the others join it.
    if (spec.rank == 0) {
        ++m_attempt;
        m_ranks.clear();
        m_jobId.clear();
        m_job = SlurmJobState();
        m_jobFinished = false;
        m_finishedPolls = 0;
        m_allExitedPolls = 0;
        m_cancelRequested = false;
        m_cancelledPending = false;
    }
    const int attempt = std::max(1, m_attempt);
    Rank &r = m_ranks[spec.rank];
    r = Rank();
    r.attempt = attempt;
    r.baseName = SlurmScript::baseName(spec.rank, attempt);
    QString error;
    if (!writeFile(rankPath(spec.rank, QStringLiteral(".spec")),
                   SlurmScript::rankSpec(spec, m_libraryDirectory,
                                         spec.program == m_binary ? m_binarySha256 : QString()),
                   &error)) {
        RankExit e;
        e.exitCode = -1;
        e.detail = tr("failed to start: %1").arg(error);
        finishRank(spec.rank, e);
        return;
    }
    if (spec.rank == 0)
        submit(attempt);
}

void SlurmJobConnection::submit(int attempt)
{
    SlurmScript::Job job;
    job.runId = m_runId;
    job.runDirectory = m_runDirectory;
    job.attempt = attempt;
    job.settings = SlurmSettings::of(m_profile);
    const QByteArray script = SlurmScript::batchScript(job);
    const QString file = m_runDirectory + QStringLiteral("/job.a%1.sbatch").arg(attempt);
    QString error;
    SshExecResult r;
    if (writeFile(file, script, &error)) {
        // From the run directory: relative paths in the user's sbatch options mean the same.
        r = m_login->run(
            sh(R"(umask 077; cd -- "$1" && exec sbatch --parsable "$2")", {m_runDirectory, file}),
            60000);
        if (r.ok()) {
            m_jobId = SlurmJobState::jobIdFromSbatch(r.out);
            if (m_jobId.isEmpty())
                error = tr("%1: sbatch answered no job id: \"%2\"")
                            .arg(m_login->describe(), printableText(r.out.trimmed(), 400));
        } else
            error =
                tr("%1: sbatch refused the job: %2").arg(m_login->describe(), r.describeFailure());
    }
    if (m_jobId.isEmpty()) {
        RankExit e;
        e.exitCode = -1;
        e.detail = tr("failed to start: %1").arg(error);
        finishRank(0, e);
        return;
    }
    writeFile(m_runDirectory + QStringLiteral("/job.a%1.id").arg(attempt), m_jobId.toUtf8() + '\n',
              &error);
    qCDebug(lcTransport) << "slurm: submitted job" << m_jobId << "for" << m_runId;
    emit jobSubmitted(m_jobId, attempt, script);
    emit progress(tr("submitted job %1").arg(m_jobId));
    m_timer->start();
    poll();
}

void SlurmJobConnection::attachRank(const RankLaunchSpec &spec, int attempt, qint64 stdoutBytes,
                                    qint64 stderrBytes)
{
    if (m_jobId.isEmpty() || attempt != m_attempt) {
        const SshExecResult r = m_login->run(
            sh("cat -- \"$1\"", {m_runDirectory + QStringLiteral("/job.a%1.id").arg(attempt)}));
        m_jobId = r.ok() ? SlurmJobState::jobIdFromSbatch(r.out) : QString();
        m_attempt = attempt;
    }
    Rank &r = m_ranks[spec.rank];
    r = Rank();
    r.attempt = attempt;
    r.baseName = SlurmScript::baseName(spec.rank, attempt);
    r.stdoutOffset = stdoutBytes;
    r.stderrOffset = stderrBytes;
    if (m_jobId.isEmpty()) {
        RankExit e;
        e.exitCode = -1;
        e.detail = tr("no Slurm job of attempt %1 in %2").arg(attempt).arg(m_runDirectory);
        finishRank(spec.rank, e);
        return;
    }
    if (!m_timer->isActive()) {
        m_timer->start();
        QTimer::singleShot(0, this, &SlurmJobConnection::poll);
    }
}

void SlurmJobConnection::writeStdin(int rank, const QByteArray &data)
{
    if (!m_ranks.contains(rank) || m_ranks[rank].exited)
        return;
    // A stop before anything ran: the job leaves the queue, nothing else is to be stopped.
    if (data.contains("stop") && !m_jobFinished && m_job.phase() != SlurmJobState::Phase::Running &&
        !m_ranks[rank].pidSeen) {
        m_cancelledPending = true;
        cancelJob(tr("stopped while pending"));
        return;
    }
    const SshExecResult r =
        m_login->run(sh("cat >>\"$1\"", {rankPath(rank, QStringLiteral(".in"))}), 30000, data);
    if (!r.ok())
        qCWarning(lcTransport) << "slurm: stdin of rank" << rank << r.describeFailure();
}

void SlurmJobConnection::closeStdin(int rank)
{
    if (m_ranks.contains(rank) && !m_ranks[rank].exited)
        m_login->run(sh(": >>\"$1\"", {rankPath(rank, QStringLiteral(".stdin-closed"))}));
}

void SlurmJobConnection::signalRank(int rank, int signal)
{
    if (!m_ranks.contains(rank) || m_ranks[rank].exited)
        return;
    Rank &r = m_ranks[rank];
    r.signalsSent.insert(signal);
    // SIGKILL is the end of the whole gang (no rank of a DDP job lives on without the others),
    // and a job that is not running yet has nothing to signal: both are scancel.
    if (signal == SIGKILL || !r.pidSeen) {
        cancelJob(signal == SIGKILL ? tr("SIGKILL to rank %1").arg(rank)
                                    : tr("stopped while pending"));
        if (!r.pidSeen)
            m_cancelledPending = true;
        return;
    }
    const QString file = rankPath(rank, QStringLiteral(".sig.%1").arg(++m_signalSerial));
    QString error;
    writeFile(file, QByteArray::number(signal) + '\n', &error);
}

void SlurmJobConnection::cancelJob(const QString &why)
{
    if (m_jobId.isEmpty() || m_jobFinished || m_cancelRequested)
        return;
    m_cancelRequested = true;
    qCDebug(lcTransport) << "slurm: scancel" << m_jobId << why;
    const SshExecResult r = m_login->run(sh("exec scancel \"$1\"", {m_jobId}));
    if (!r.ok())
        emit progress(tr("scancel %1 failed: %2").arg(m_jobId, r.describeFailure()));
    else
        emit progress(tr("cancelled job %1 (%2)").arg(m_jobId, why));
    if (m_timer && !m_timer->isActive())
        m_timer->start();
}

void SlurmJobConnection::shutdown()
{
    if (m_shutDown)
        return;
    m_shutDown = true;
    if (m_timer)
        m_timer->stop();
    if (!m_detached && !m_jobFinished && !m_jobId.isEmpty()) {
        // Every rank ended: the batch script is about to, which leaves the job COMPLETED (or
        // FAILED) rather than CANCELLED in the cluster's accounting.
        bool allExited = !m_ranks.isEmpty();
        for (const Rank &r : std::as_const(m_ranks))
            allExited = allExited && r.exited;
        for (int i = 0; allExited && i < 15 && !m_jobFinished; ++i) {
            QThread::msleep(200);
            const SshExecResult r = m_login->run(sh("scontrol -o show job \"$1\" 2>&1", {m_jobId}));
            const SlurmJobState job = SlurmJobState::fromScontrol(r.out);
            m_jobFinished = !job.known || job.phase() == SlurmJobState::Phase::Finished;
        }
        if (!m_jobFinished)
            cancelJob(tr("the launcher ended"));
    }
    m_login->close();
}

SlurmJobState SlurmJobConnection::lookUpFinished()
{
    // slurmctld forgot the job (MinJobAge): accounting may still know how it ended.
    const SshExecResult r = m_login->run(
        sh("sacct -n -P -X -j \"$1\" -o State,ExitCode,Reason 2>/dev/null | head -n 1", {m_jobId}));
    SlurmJobState s = SlurmJobState::fromSacct(m_jobId, r.ok() ? r.out : QByteArray());
    if (!s.known)
        s.jobId = m_jobId;
    return s;
}

void SlurmJobConnection::poll()
{
    if (m_shutDown || m_jobId.isEmpty())
        return;
    QList<SlurmScript::PollRank> ranks;
    QList<int> order;
    for (auto it = m_ranks.cbegin(); it != m_ranks.cend(); ++it) {
        if (it->exited)
            continue;
        ranks.append({it->baseName, it->stdoutOffset, it->stderrOffset});
        order.append(it.key());
    }
    const bool pending = m_job.phase() != SlurmJobState::Phase::Running && !m_jobFinished;
    const SshExecResult r = m_login->run(
        SlurmScript::pollCommand(m_runDirectory, m_jobId, SlurmSettings::of(m_profile).partition,
                                 pending, ranks, kMaxPollBytes));
    SlurmScript::PollReply reply;
    QString error;
    if (!r.error.isEmpty() || !SlurmScript::parsePoll(r.out, &reply, &error)) {
        // A cut connection to the login: reconnect on the next tick, resume at the same offsets.
        qCDebug(lcTransport) << "slurm: poll failed" << r.error << error;
        if (m_login->isRemote() && !m_login->isOpen()) {
            QString why;
            if (!m_login->open(&why))
                emit progress(tr("login lost, reconnecting: %1").arg(why));
        }
        return;
    }
    SlurmJobState job = SlurmJobState::fromScontrol(reply.jobLine);
    if (!job.known && m_job.phase() != SlurmJobState::Phase::Unknown)
        job = lookUpFinished();
    if (!job.known && reply.jobLine.contains("Invalid job id"))
        job = lookUpFinished();
    if (job.known || reply.jobLine.contains("Invalid job id")) {
        job.jobId = m_jobId;
        m_job = job;
    }
    if (job.phase() == SlurmJobState::Phase::Finished ||
        (!job.known && reply.jobLine.contains("Invalid job id")))
        m_jobFinished = true;
    if (m_job.phase() == SlurmJobState::Phase::Pending) {
        const int position = int(reply.pendingQueue.indexOf(m_jobId)) + 1;
        const QString stage = m_job.describePending(position);
        if (stage != m_lastProgress) {
            m_lastProgress = stage;
            emit progress(stage);
        }
    } else if (m_job.phase() == SlurmJobState::Phase::Running &&
               m_lastProgress != QLatin1String("running")) {
        m_lastProgress = QStringLiteral("running");
        emit progress(tr("job %1 running on %2").arg(m_jobId, m_job.nodeList));
    }
    for (int i = 0; i < reply.ranks.size() && i < order.size(); ++i) {
        const SlurmScript::PollReply::Rank &pr = reply.ranks[i];
        const bool complete = pr.out.size() < kMaxPollBytes && pr.err.size() < kMaxPollBytes;
        handleRank(order[i], pr, complete);
    }
    if (m_jobFinished)
        ++m_finishedPolls;
    // The job is over and one more poll read what its files still held: whoever has not
    // reported an exit ends with the job.
    if (m_jobFinished && m_finishedPolls >= 2) {
        for (auto it = m_ranks.begin(); it != m_ranks.end(); ++it)
            if (!it->exited)
                finishRank(it.key(), exitWithJob(it.key()));
    }
    bool allExited = true;
    for (const Rank &rk : std::as_const(m_ranks))
        allExited = allExited && rk.exited;
    if (allExited && m_jobFinished) {
        m_timer->stop();
        return;
    }
    // Every rank the controller started has ended, but the job lives on (ranks it never started
    // wait for their specs): it would hold its nodes for nothing.
    if (allExited && !m_detached && ++m_allExitedPolls > 6)
        cancelJob(tr("every started rank has ended"));
}

void SlurmJobConnection::handleRank(int rank, const SlurmScript::PollReply::Rank &pr, bool complete)
{
    Rank &r = m_ranks[rank];
    if (pr.pid > 0 && !r.pidSeen) {
        r.pidSeen = true;
        emit rankStarted(rank, pr.pid);
    }
    if (!pr.out.isEmpty()) {
        r.stdoutOffset += pr.out.size();
        emit rankOutput(rank, StreamKind::Stdout, pr.out);
    }
    if (!pr.err.isEmpty()) {
        r.stderrOffset += pr.err.size();
        emit rankOutput(rank, StreamKind::Stderr, pr.err);
    }
    if (!pr.exited || !complete)
        return;
    const int status = pr.status;
    const int signal = status > 128 && status < 128 + 65 ? status - 128 : 0;
    const bool ours = m_cancelRequested || r.signalsSent.contains(signal);
    // An end nobody here asked for may be the cluster's doing: scancel from outside, the time
    // limit, a node failure, preemption (the worker stops cleanly on SIGTERM, so even exit code 0
    // may be one). slurmctld records the job's state before it signals the tasks, so the next
    // job line read after the exit tells; a SIGTERM or SIGKILL waits a few polls for it.
    // After scancel the job is COMPLETING for a while before it is CANCELLED: wait that out.
    const int hold = signal == SIGTERM || signal == SIGKILL ? kHoldPolls : 1;
    const bool ending = m_job.state == QLatin1String("COMPLETING") && r.heldPolls < kMaxHoldPolls;
    if (!ours && !m_job.endedByCluster() && !m_jobFinished && (ending || r.heldPolls < hold)) {
        ++r.heldPolls;
        return;
    }
    RankExit e;
    if (!ours && m_job.endedByCluster()) {
        e.exitCode = -1;
        e.detail = m_job.describeEnd();
    } else if (signal > 0) {
        e.crashed = true;
        e.signal = signal;
    } else {
        e.exitCode = status;
    }
    finishRank(rank, e);
}

RankExit SlurmJobConnection::exitWithJob(int rank) const
{
    const Rank &r = m_ranks.value(rank);
    RankExit e;
    if (m_cancelledPending || (!r.pidSeen && m_cancelRequested)) {
        e.detail = tr("cancelled while pending (Slurm job %1)").arg(m_jobId);
        return e; // clean: it never ran, and the launcher asked for that
    }
    if (m_cancelRequested) {
        e.crashed = true;
        e.signal = SIGKILL;
        e.detail = tr("Slurm job %1 cancelled by RankDeck").arg(m_jobId);
        return e;
    }
    if (m_job.endedByCluster() || !m_job.known) {
        e.exitCode = -1;
        e.detail = r.pidSeen
                       ? m_job.describeEnd()
                       : tr("failed to start: %1 before the rank ran").arg(m_job.describeEnd());
        return e;
    }
    e.crashed = true;
    e.signal = SIGKILL;
    e.detail = tr("killed when Slurm ended the step of job %1 (%2)").arg(m_jobId, m_job.state);
    return e;
}

void SlurmJobConnection::finishRank(int rank, const RankExit &exit)
{
    Rank &r = m_ranks[rank];
    if (r.exited)
        return;
    r.exited = true;
    RankExit e = exit;
    e.timeUs = nowUs();
    emit rankExited(rank, e);
}

} // namespace rankdeck
