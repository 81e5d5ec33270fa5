// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Slurm transport's readers of what the cluster prints: SlurmScript::parsePoll (the framed
// answer of the poll command: scontrol's job line, squeue's pending queue, per rank its pid and
// exit files and the bytes of its .out and .err), SlurmJobState::fromScontrol (`scontrol -o show
// job`), fromSacct (`sacct -n -P -X -o State,ExitCode,Reason`), jobIdFromSbatch (`sbatch
// --parsable`, the job.a<A>.id file) and what the run shows of them (describePending,
// describeEnd). Every reader runs on every input, so one corpus serves them all.
// Promises checked: a poll reply is read whole or refused with a message; the ranks' bytes are
// bytes of the input after their rank's line, each stream once, never more than it holds; a job
// state names its job exactly when it is known; a job id is 1–10 digits or nothing; the
// descriptions name the job. Input: [queue position] then the text.
#include "fuzzinput.h"

#include "transport/slurm/slurmjobstate.h"
#include "transport/slurm/slurmscript.h"

using namespace rankdeck;

namespace {

void checkState(const SlurmJobState &s, int queuePosition)
{
    if (!s.known)
        FUZZ_CHECK(s.phase() == SlurmJobState::Phase::Unknown);
    else
        FUZZ_CHECK(!s.state.isEmpty());
    FUZZ_CHECK(!s.state.contains(QLatin1Char(' ')));
    const QString end = s.describeEnd();
    FUZZ_CHECK(end.contains(QStringLiteral("Slurm job %1").arg(s.jobId)));
    FUZZ_CHECK(s.describePending(queuePosition).startsWith(QLatin1String("pending")));
    (void)s.endedByCluster();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    fuzz::FuzzInput in(data, size);
    const int queuePosition = in.byte();
    const QByteArray text = in.rest().toByteArray();

    SlurmScript::PollReply reply;
    QString error;
    if (SlurmScript::parsePoll(text, &reply, &error)) {
        FUZZ_CHECK(!reply.jobLine.contains('\n'));
        qsizetype bytes = reply.jobLine.size();
        for (const SlurmScript::PollReply::Rank &r : std::as_const(reply.ranks)) {
            FUZZ_CHECK(!r.baseName.isEmpty() && !r.baseName.contains(QLatin1Char('\n')));
            FUZZ_CHECK(!r.node.contains(QLatin1Char('\n')));
            // Each stream is read once, as it stands in the reply after its rank's line.
            for (const QByteArray *chunk : {&r.out, &r.err}) {
                bytes += chunk->size();
                const qsizetype rankLine = text.indexOf("@rank " + r.baseName.toLatin1() + ' ');
                FUZZ_CHECK(rankLine >= 0);
                FUZZ_CHECK(chunk->isEmpty() || text.indexOf(*chunk, rankLine + 1) > rankLine);
            }
        }
        FUZZ_CHECK(bytes <= text.size());
        checkState(SlurmJobState::fromScontrol(reply.jobLine), queuePosition);
    } else {
        FUZZ_CHECK(!error.isEmpty());
    }

    for (const QByteArray &line : text.split('\n')) {
        const SlurmJobState scontrol = SlurmJobState::fromScontrol(line);
        FUZZ_CHECK(scontrol.known == (!scontrol.jobId.isEmpty() && !scontrol.state.isEmpty()));
        checkState(scontrol, queuePosition);
        const SlurmJobState sacct = SlurmJobState::fromSacct(QStringLiteral("12"), line);
        FUZZ_CHECK(sacct.known == !sacct.state.isEmpty());
        checkState(sacct, queuePosition);
    }

    const QString id = SlurmJobState::jobIdFromSbatch(text);
    FUZZ_CHECK(id.size() <= 10);
    for (const QChar c : id)
        FUZZ_CHECK(c >= QLatin1Char('0') && c <= QLatin1Char('9'));
    if (!id.isEmpty())
        FUZZ_CHECK(text.contains(id.toLatin1()));
    return 0;
}
