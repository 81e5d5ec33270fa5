// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/slurm/slurmjobstate.h"

#include "util/translation.h"

#include <QHash>

namespace rankdeck {

namespace {

// "0:15" → code 0, signal 15.
void parseExitCode(const QString &v, int *code, int *signal)
{
    *code = v.section(QLatin1Char(':'), 0, 0).toInt();
    *signal = v.section(QLatin1Char(':'), 1, 1).toInt();
}

QString ordinal(int n)
{
    const int mod100 = n % 100;
    const char *suffix = "th";
    if (mod100 < 11 || mod100 > 13) {
        if (n % 10 == 1)
            suffix = "st";
        else if (n % 10 == 2)
            suffix = "nd";
        else if (n % 10 == 3)
            suffix = "rd";
    }
    return QString::number(n) + QLatin1String(suffix);
}

} // namespace

SlurmJobState::Phase SlurmJobState::phase() const
{
    static const QStringList pending{QStringLiteral("PENDING"),      QStringLiteral("REQUEUED"),
                                     QStringLiteral("REQUEUE_HOLD"), QStringLiteral("REQUEUE_FED"),
                                     QStringLiteral("CONFIGURING"),  QStringLiteral("RESIZING"),
                                     QStringLiteral("SUSPENDED")};
    if (!known || state.isEmpty())
        return Phase::Unknown;
    if (pending.contains(state))
        return Phase::Pending;
    if (state == QLatin1String("RUNNING") || state == QLatin1String("COMPLETING") ||
        state == QLatin1String("STAGE_OUT") || state == QLatin1String("SIGNALING"))
        return Phase::Running;
    return Phase::Finished;
}

bool SlurmJobState::endedByCluster() const
{
    static const QStringList outside{
        QStringLiteral("CANCELLED"),     QStringLiteral("TIMEOUT"),   QStringLiteral("NODE_FAIL"),
        QStringLiteral("OUT_OF_MEMORY"), QStringLiteral("PREEMPTED"), QStringLiteral("BOOT_FAIL"),
        QStringLiteral("DEADLINE"),      QStringLiteral("REQUEUED"),  QStringLiteral("REVOKED")};
    return outside.contains(state) || restarts > 0;
}

SlurmJobState SlurmJobState::fromScontrol(const QByteArray &line)
{
    SlurmJobState s;
    QHash<QString, QString> kv;
    // Values have no spaces in -o output, except a few free-text ones (Command=, WorkDir= may,
    // Comment=); those come after the fields read here.
    for (const QByteArray &word : line.simplified().split(' ')) {
        const qsizetype eq = word.indexOf('=');
        if (eq > 0 && !kv.contains(QString::fromUtf8(word.left(eq))))
            kv.insert(QString::fromUtf8(word.left(eq)), QString::fromUtf8(word.mid(eq + 1)));
    }
    s.jobId = kv.value(QStringLiteral("JobId"));
    s.state = kv.value(QStringLiteral("JobState"));
    s.known = !s.jobId.isEmpty() && !s.state.isEmpty();
    s.reason = kv.value(QStringLiteral("Reason"));
    parseExitCode(kv.value(QStringLiteral("ExitCode")), &s.exitCode, &s.exitSignal);
    s.restarts = kv.value(QStringLiteral("Restarts")).toInt();
    s.nodeList = kv.value(QStringLiteral("NodeList"));
    s.timeLimit = kv.value(QStringLiteral("TimeLimit"));
    return s;
}

SlurmJobState SlurmJobState::fromSacct(const QString &jobId, const QByteArray &line)
{
    SlurmJobState s;
    s.jobId = jobId;
    const QList<QByteArray> f = line.trimmed().split('|');
    s.state = QString::fromUtf8(f.value(0)).section(QLatin1Char(' '), 0, 0);
    s.known = !s.state.isEmpty();
    parseExitCode(QString::fromUtf8(f.value(1)), &s.exitCode, &s.exitSignal);
    s.reason = QString::fromUtf8(f.value(2));
    return s;
}

QString SlurmJobState::jobIdFromSbatch(const QByteArray &answer)
{
    QByteArray last;
    for (const QByteArray &line : answer.split('\n'))
        if (!line.trimmed().isEmpty())
            last = line.trimmed();
    const qsizetype semicolon = last.indexOf(';');
    const QByteArray id = (semicolon < 0 ? last : last.left(semicolon)).trimmed();
    if (id.isEmpty() || id.size() > 10)
        return {};
    for (const char c : id)
        if (c < '0' || c > '9')
            return {};
    return QString::fromLatin1(id);
}

QString SlurmJobState::describePending(int queuePosition) const
{
    QString s = tr("pending");
    if (!reason.isEmpty() && reason != QLatin1String("None"))
        s += QStringLiteral(" (%1)").arg(reason);
    if (queuePosition > 0)
        s += tr(", %1 in the queue").arg(ordinal(queuePosition));
    return s;
}

QString SlurmJobState::describeEnd() const
{
    const QString job = tr("Slurm job %1").arg(jobId);
    if (!known)
        return tr("%1 ended; Slurm no longer knows how (no accounting)").arg(job);
    if (restarts > 0 || state == QLatin1String("REQUEUED") || state == QLatin1String("PREEMPTED"))
        // One arg() call each: a second one would also fill a "%3" in Slurm's own text.
        return tr("%1 was preempted (%2, restarts %3): its ranks were lost")
            .arg(job, state, QString::number(restarts));
    if (state == QLatin1String("CANCELLED"))
        return tr("%1 was cancelled outside RankDeck (scancel)").arg(job);
    if (state == QLatin1String("TIMEOUT"))
        return timeLimit.isEmpty()
                   ? tr("%1 reached its time limit (TIMEOUT)").arg(job)
                   : tr("%1 reached its time limit (TIMEOUT, %2)").arg(job, timeLimit);
    if (state == QLatin1String("NODE_FAIL"))
        return tr("%1 lost a node (NODE_FAIL on %2)").arg(job, nodeList);
    if (state == QLatin1String("OUT_OF_MEMORY"))
        return tr("%1 ran out of memory (OUT_OF_MEMORY)").arg(job);
    if (state == QLatin1String("BOOT_FAIL"))
        return tr("%1 lost its nodes at boot (BOOT_FAIL)").arg(job);
    if (state == QLatin1String("DEADLINE"))
        return tr("%1 passed its deadline (DEADLINE)").arg(job);
    return tr("%1 ended (%2, exit code %3)").arg(job, state, QString::number(exitCode));
}

} // namespace rankdeck
