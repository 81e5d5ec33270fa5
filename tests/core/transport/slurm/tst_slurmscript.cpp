// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Slurm transport's shell text without a cluster: the batch script's options, the poll
// command run by the local /bin/sh on real files (offsets, the exit file before the bytes), the
// task wrapper run with a fake SLURM_* environment (rank 0 publishes its address, the others
// wait for their spec; signals by file; the exit status), and what scontrol's answers mean.
#include "transport/slurm/slurmjobstate.h"
#include "transport/slurm/slurmscript.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;

namespace {

bool writeFile(const QString &path, const QByteArray &data)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(data) == data.size();
}

QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

class TestSlurmScript : public QObject
{
    Q_OBJECT

private slots:
    void batchScriptHasOneStepWithEveryOption();
    void pollReadsFromTheOffsets();
    void wrapperRunsTheRankWithItsSpec();
    void wrapperDeliversSignalFiles();
    void wrapperRunsOnlyTheDeployedBinary_data();
    void wrapperRunsOnlyTheDeployedBinary();
    void jobStateFromScontrol_data();
    void jobStateFromScontrol();
    void pendingNamesReasonAndPosition();
    void jobIdFromSbatch_data();
    void jobIdFromSbatch();
    void pollRefusesWhatItCannotPlace();
    void endKeepsSlurmsTextAsItIs();
};

void TestSlurmScript::batchScriptHasOneStepWithEveryOption()
{
    SlurmScript::Job job;
    job.runId = QStringLiteral("r1");
    job.runDirectory = QStringLiteral("/shared/runs/r1");
    job.attempt = 2;
    job.settings.partition = QStringLiteral("gpu");
    job.settings.account = QStringLiteral("proj");
    job.settings.qos = QStringLiteral("high");
    job.settings.timeLimit = QStringLiteral("1:00:00");
    job.settings.nodes = 2;
    job.settings.nprocPerNode = 4;
    job.settings.gpusPerNode = 4;
    job.settings.cpusPerTask = 8;
    job.settings.sbatchArgs = {QStringLiteral("--exclusive"), QStringLiteral("--mem=0")};
    const QByteArray s = SlurmScript::batchScript(job);
    for (const char *line :
         {"#SBATCH --nodes=2\n", "#SBATCH --ntasks-per-node=4\n", "#SBATCH --partition=gpu\n",
          "#SBATCH --account=proj\n", "#SBATCH --qos=high\n", "#SBATCH --time=1:00:00\n",
          "#SBATCH --gpus-per-node=4\n", "#SBATCH --cpus-per-task=8\n", "#SBATCH --exclusive\n",
          "#SBATCH --mem=0\n", "#SBATCH --open-mode=append\n",
          "#SBATCH --output=/shared/runs/r1/job.a2.out\n"})
        QVERIFY2(s.contains(line), line);
    QCOMPARE(s.count("srun "), 1);
    QVERIFY(s.contains("--kill-on-bad-exit=1"));
    QVERIFY(s.contains("--ntasks=8"));
    QVERIFY(s.contains("--output='/shared/runs/r1/rank%t.a2.out'"));
    QVERIFY(s.contains("--error='/shared/runs/r1/rank%t.a2.err'"));
    QVERIFY(s.contains("/bin/sh '/shared/runs/r1/rank.sh' '/shared/runs/r1' 2\n"));
    // Without the optional fields their lines are absent (the partition's defaults apply).
    job.settings = SlurmSettings();
    const QByteArray plain = SlurmScript::batchScript(job);
    QVERIFY(!plain.contains("--partition"));
    QVERIFY(!plain.contains("--gpus-per-node"));
    QVERIFY(!plain.contains("--time"));
}

void TestSlurmScript::pollReadsFromTheOffsets()
{
    QTemporaryDir dir;
    QVERIFY(writeFile(dir.filePath(QStringLiteral("rank0.a1.out")), "hello\nworld\n"));
    QVERIFY(writeFile(dir.filePath(QStringLiteral("rank0.a1.err")), "e1\n"));
    QVERIFY(writeFile(dir.filePath(QStringLiteral("rank0.a1.pid")), "4242 n1\n"));
    QVERIFY(writeFile(dir.filePath(QStringLiteral("rank1.a1.out")), "x"));
    QVERIFY(writeFile(dir.filePath(QStringLiteral("rank1.a1.exit")), "139\n"));
    // No scontrol on PATH: the job line is the shell's error, the rest must still come back.
    const QByteArray cmd =
        SlurmScript::pollCommand(dir.path(), QStringLiteral("7"), QString(), true,
                                 {{QStringLiteral("rank0.a1"), 6, 0},
                                  {QStringLiteral("rank1.a1"), 0, 0},
                                  {QStringLiteral("rank2.a1"), 0, 0}},
                                 4);
    QProcess p;
    QProcessEnvironment env;
    env.insert(QStringLiteral("PATH"), QStringLiteral("/usr/bin:/bin"));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral("/bin/sh"), {QStringLiteral("-c"), QString::fromUtf8(cmd)});
    QVERIFY(p.waitForFinished(10000));
    SlurmScript::PollReply reply;
    QString error;
    QVERIFY2(SlurmScript::parsePoll(p.readAllStandardOutput(), &reply, &error), qPrintable(error));
    QCOMPARE(reply.ranks.size(), 3);
    QCOMPARE(reply.ranks[0].pid, 4242);
    QCOMPARE(reply.ranks[0].node, QStringLiteral("n1"));
    QCOMPARE(reply.ranks[0].exited, false);
    QCOMPARE(reply.ranks[0].out, QByteArray("worl")); // from byte 6, at most 4
    QCOMPARE(reply.ranks[0].err, QByteArray("e1\n"));
    QCOMPARE(reply.ranks[1].pid, 0);
    QVERIFY(reply.ranks[1].exited);
    QCOMPARE(reply.ranks[1].status, 139);
    QCOMPARE(reply.ranks[1].out, QByteArray("x"));
    QVERIFY(reply.ranks[2].out.isEmpty()); // no files yet
    // A reply cut short is refused, not half-parsed.
    QVERIFY(!SlurmScript::parsePoll("@job\nJobId=7\n@rank rank0.a1 1|\n@data rank0.a1 out 10\nab",
                                    &reply, &error));
}

void TestSlurmScript::wrapperRunsTheRankWithItsSpec()
{
    QTemporaryDir dir;
    QVERIFY(writeFile(dir.filePath(QStringLiteral("rank.sh")), SlurmScript::rankWrapper()));
    auto task = [&](int rank) {
        auto *p = new QProcess(this);
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("SLURM_PROCID"), QString::number(rank));
        env.insert(QStringLiteral("SLURM_LOCALID"), QString::number(rank % 2));
        env.insert(QStringLiteral("SLURM_NODEID"), QString::number(rank / 2));
        env.insert(QStringLiteral("SLURM_NTASKS"), QStringLiteral("2"));
        env.insert(QStringLiteral("SLURMD_NODENAME"), QStringLiteral("n%1").arg(rank / 2 + 1));
        env.insert(QStringLiteral("HOME"), dir.path());
        // No scontrol: rank 0 falls back to its own address.
        env.insert(QStringLiteral("PATH"), QStringLiteral("/usr/bin:/bin"));
        p->setProcessEnvironment(env);
        p->start(QStringLiteral("/bin/sh"),
                 {dir.filePath(QStringLiteral("rank.sh")), dir.path(), QStringLiteral("1")});
        return p;
    };
    RankLaunchSpec spec;
    spec.program = QStringLiteral("/bin/sh");
    spec.arguments = {
        QStringLiteral("-c"),
        QStringLiteral("read line; echo \"rank=$RANK local=$LOCAL_RANK world=$WORLD_SIZE "
                       "addr=$MASTER_ADDR x=$X cwd=$(pwd) in=$line\"; exit 3")};
    spec.environment.insert(QStringLiteral("X"), QStringLiteral("it's $(not run)"));
    spec.environment.insert(QStringLiteral("RANK"), QStringLiteral("99")); // Slurm's wins
    spec.environment.insert(QStringLiteral("MASTER_ADDR"),
                            QStringLiteral("slurm node 0")); // rank 0's wins
    QVERIFY(writeFile(dir.filePath(QStringLiteral("rank0.a1.spec")),
                      SlurmScript::rankSpec(spec, QString())));
    QVERIFY(writeFile(dir.filePath(QStringLiteral("rank0.a1.in")), "go\n"));
    QProcess *r0 = task(0);
    QProcess *r1 = task(1);
    QVERIFY(r0->waitForFinished(10000));
    QCOMPARE(r0->exitCode(), 3);
    const QString master =
        QString::fromUtf8(readFile(dir.filePath(QStringLiteral("master.a1")))).trimmed();
    QVERIFY(!master.isEmpty());
    QCOMPARE(QString::fromUtf8(r0->readAllStandardOutput()).trimmed(),
             QStringLiteral("rank=0 local=0 world=2 addr=%1 x=it's $(not run) cwd=%2 in=go")
                 .arg(master, dir.path()));
    QCOMPARE(readFile(dir.filePath(QStringLiteral("rank0.a1.exit"))).trimmed(), QByteArray("3"));
    QVERIFY(readFile(dir.filePath(QStringLiteral("rank0.a1.pid"))).endsWith(" n1\n"));
    // Rank 1 waits until its spec is there (the launcher writes it once rank 0's port is known).
    QTest::qWait(500);
    QCOMPARE(r1->state(), QProcess::Running);
    QVERIFY(writeFile(dir.filePath(QStringLiteral("rank1.a1.spec")),
                      SlurmScript::rankSpec(spec, QString())));
    QVERIFY(writeFile(dir.filePath(QStringLiteral("rank1.a1.in")), "later\n"));
    QVERIFY(r1->waitForFinished(10000));
    QVERIFY(r1->readAllStandardOutput().startsWith("rank=1 local=1 world=2"));
}

void TestSlurmScript::wrapperRunsOnlyTheDeployedBinary_data()
{
    QTest::addColumn<bool>("planted");
    QTest::newRow("the deployed binary") << false;
    QTest::newRow("another under its name") << true;
}

// Issue 29: each rank hashes the deployed binary on its node right before the exec (its name is
// public; someone who can write to the shared directory could have replaced it since the
// launcher looked), and gets its run directory as an absolute path (it starts in its working
// directory, a --sync copy's; words after "--" are the program's own and stay as they are).
void TestSlurmScript::wrapperRunsOnlyTheDeployedBinary()
{
    QFETCH(bool, planted);
    QTemporaryDir dir;
    QVERIFY(writeFile(dir.filePath(QStringLiteral("rank.sh")), SlurmScript::rankWrapper()));
    const QString binary = dir.filePath(QStringLiteral("bin/rankdeck-supervisor-x"));
    QVERIFY(QDir().mkpath(dir.filePath(QStringLiteral("bin"))));
    QVERIFY(QFile::copy(QStringLiteral("/bin/echo"), binary));
    QFile f(binary);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCryptographicHash hash(QCryptographicHash::Sha256);
    QVERIFY(hash.addData(&f));
    f.close();
    if (planted) {
        QVERIFY(QFile::remove(binary));
        QVERIFY(writeFile(binary, "#!/bin/sh\necho planted-binary-ran\n"));
        QVERIFY(QFile::setPermissions(binary, QFileDevice::ReadOwner | QFileDevice::ExeOwner));
    }
    RankLaunchSpec spec;
    spec.program = binary;
    spec.arguments = {QStringLiteral("--run-dir"), QStringLiteral("~/.cache/rankdeck/runs/r1"),
                      QStringLiteral("--"), QStringLiteral("--run-dir"), QStringLiteral("~/mine")};
    QVERIFY(writeFile(
        dir.filePath(QStringLiteral("rank0.a1.spec")),
        SlurmScript::rankSpec(spec, QString(), QString::fromLatin1(hash.result().toHex()))));
    QVERIFY(writeFile(dir.filePath(QStringLiteral("rank0.a1.in")), ""));
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("SLURM_PROCID"), QStringLiteral("0"));
    env.insert(QStringLiteral("SLURMD_NODENAME"), QStringLiteral("n1"));
    env.insert(QStringLiteral("HOME"), dir.path());
    env.insert(QStringLiteral("PATH"), QStringLiteral("/usr/bin:/bin"));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral("/bin/sh"),
            {dir.filePath(QStringLiteral("rank.sh")), dir.path(), QStringLiteral("1")});
    QVERIFY(p.waitForFinished(20000));
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    const QString err = QString::fromUtf8(p.readAllStandardError());
    if (planted) {
        QCOMPARE(p.exitCode(), 127);
        QVERIFY2(!out.contains(QStringLiteral("planted-binary-ran")), qPrintable(out));
        QVERIFY2(
            err.contains(binary + QStringLiteral(" on n1 is not the binary RankDeck deployed")),
            qPrintable(err));
        return;
    }
    QVERIFY2(p.exitCode() == 0, qPrintable(err));
    QCOMPARE(
        out.trimmed(),
        QStringLiteral("--run-dir %1/.cache/rankdeck/runs/r1 -- --run-dir ~/mine").arg(dir.path()));
}

void TestSlurmScript::wrapperDeliversSignalFiles()
{
    QTemporaryDir dir;
    QVERIFY(writeFile(dir.filePath(QStringLiteral("rank.sh")), SlurmScript::rankWrapper()));
    RankLaunchSpec spec;
    spec.program = QStringLiteral("/bin/sleep");
    spec.arguments = {QStringLiteral("60")};
    QVERIFY(writeFile(dir.filePath(QStringLiteral("rank0.a1.spec")),
                      SlurmScript::rankSpec(spec, QString())));
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("SLURM_PROCID"), QStringLiteral("0"));
    env.insert(QStringLiteral("HOME"), dir.path());
    p.setProcessEnvironment(env);
    p.start(QStringLiteral("/bin/sh"),
            {dir.filePath(QStringLiteral("rank.sh")), dir.path(), QStringLiteral("1")});
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(dir.filePath(QStringLiteral("rank0.a1.pid"))), 10000);
    QVERIFY(writeFile(dir.filePath(QStringLiteral("rank0.a1.sig.1")), "15\n"));
    QVERIFY(p.waitForFinished(10000));
    QCOMPARE(p.exitCode(), 128 + 15);
    QCOMPARE(readFile(dir.filePath(QStringLiteral("rank0.a1.exit"))).trimmed(), QByteArray("143"));
    QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("rank0.a1.sig.1"))));
}

void TestSlurmScript::jobStateFromScontrol_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<int>("phase");
    QTest::addColumn<bool>("byCluster");
    QTest::addColumn<QString>("end");
    QTest::newRow("pending") << QByteArray("JobId=12 JobName=x UserId=root(0) JobState=PENDING "
                                           "Reason=Resources Dependency=(null) ExitCode=0:0")
                             << int(SlurmJobState::Phase::Pending) << false << QString();
    QTest::newRow("running") << QByteArray("JobId=12 JobState=RUNNING Reason=None NodeList=n[1-2]")
                             << int(SlurmJobState::Phase::Running) << false << QString();
    QTest::newRow("cancelled")
        << QByteArray("JobId=12 JobState=CANCELLED Reason=None ExitCode=0:15")
        << int(SlurmJobState::Phase::Finished) << true
        << QStringLiteral("Slurm job 12 was cancelled outside RankDeck (scancel)");
    QTest::newRow("timeout") << QByteArray("JobId=12 JobState=TIMEOUT Reason=TimeLimit "
                                           "TimeLimit=00:01:00 ExitCode=0:0")
                             << int(SlurmJobState::Phase::Finished) << true
                             << QStringLiteral(
                                    "Slurm job 12 reached its time limit (TIMEOUT, 00:01:00)");
    QTest::newRow("node fail") << QByteArray(
                                      "JobId=12 JobState=NODE_FAIL Reason=NodeDown NodeList=n2")
                               << int(SlurmJobState::Phase::Finished) << true
                               << QStringLiteral("Slurm job 12 lost a node (NODE_FAIL on n2)");
    QTest::newRow("oom") << QByteArray("JobId=12 JobState=OUT_OF_MEMORY Reason=OutOfMemory")
                         << int(SlurmJobState::Phase::Finished) << true
                         << QStringLiteral("Slurm job 12 ran out of memory (OUT_OF_MEMORY)");
    QTest::newRow("requeued") << QByteArray("JobId=12 JobState=PENDING Reason=BeginTime Restarts=1")
                              << int(SlurmJobState::Phase::Pending) << true
                              << QStringLiteral("Slurm job 12 was preempted (PENDING, restarts 1): "
                                                "its ranks were lost");
    QTest::newRow("failed, its own doing")
        << QByteArray("JobId=12 JobState=FAILED Reason=NonZeroExitCode ExitCode=139:0")
        << int(SlurmJobState::Phase::Finished) << false
        << QStringLiteral("Slurm job 12 ended (FAILED, exit code 139)");
    QTest::newRow("forgotten") << QByteArray("slurm_load_jobs error: Invalid job id specified")
                               << int(SlurmJobState::Phase::Unknown) << false << QString();
}

void TestSlurmScript::jobStateFromScontrol()
{
    QFETCH(QByteArray, line);
    QFETCH(int, phase);
    QFETCH(bool, byCluster);
    QFETCH(QString, end);
    const SlurmJobState s = SlurmJobState::fromScontrol(line);
    QCOMPARE(int(s.phase()), phase);
    QCOMPARE(s.endedByCluster(), byCluster);
    if (!end.isEmpty())
        QCOMPARE(s.describeEnd(), end);
}

void TestSlurmScript::pendingNamesReasonAndPosition()
{
    SlurmJobState s = SlurmJobState::fromScontrol("JobId=3 JobState=PENDING Reason=Priority");
    QCOMPARE(s.describePending(2), QStringLiteral("pending (Priority), 2nd in the queue"));
    QCOMPARE(s.describePending(0), QStringLiteral("pending (Priority)"));
    s = SlurmJobState::fromSacct(QStringLiteral("3"), "CANCELLED by 0|0:15|None\n");
    QCOMPARE(s.state, QStringLiteral("CANCELLED"));
    QCOMPARE(s.exitSignal, 15);
}

void TestSlurmScript::jobIdFromSbatch_data()
{
    QTest::addColumn<QByteArray>("answer");
    QTest::addColumn<QString>("id");
    QTest::newRow("parsable") << QByteArray("4242\n") << QStringLiteral("4242");
    QTest::newRow("federation") << QByteArray("4242;cluster1\n") << QStringLiteral("4242");
    QTest::newRow("banner before") << QByteArray("Welcome\n\n4242\n  \n") << QStringLiteral("4242");
    QTest::newRow("largest id") << QByteArray("4294967295") << QStringLiteral("4294967295");
    // Was taken as the job id as it was, and then put in every scontrol and scancel command.
    QTest::newRow("banner after") << QByteArray("4242\nHave a nice day\n") << QString();
    QTest::newRow("not a number") << QByteArray("Submitted batch job 4242\n") << QString();
    QTest::newRow("too long") << QByteArray("12345678901\n") << QString();
    QTest::newRow("empty") << QByteArray("\n") << QString();
    QTest::newRow("negative") << QByteArray("-1\n") << QString();
}

void TestSlurmScript::jobIdFromSbatch()
{
    QFETCH(QByteArray, answer);
    QFETCH(QString, id);
    QCOMPARE(SlurmJobState::jobIdFromSbatch(answer), id);
}

void TestSlurmScript::pollRefusesWhatItCannotPlace()
{
    // pos + n overflowed (signed, undefined) for a count near 2^63; seen while writing
    // fuzz_slurm. Any count past the end is refused the same way.
    SlurmScript::PollReply reply;
    QString error;
    for (const QByteArray &count : {QByteArray("9223372036854775807"), QByteArray("3")}) {
        const QByteArray cut =
            "@job\nJobId=7\n@rank rank0.a1 1|\n@data rank0.a1 out " + count + "\nab";
        QVERIFY2(!SlurmScript::parsePoll(cut, &reply, &error), count.constData());
        QCOMPARE(error, QStringLiteral("truncated poll reply"));
    }
    QVERIFY(SlurmScript::parsePoll("@rank rank0.a1 1|\n@data rank0.a1 out 2\nab@end\n", &reply,
                                   &error));
    QCOMPARE(reply.ranks.value(0).out, QByteArray("ab"));
    // Data that is not the last rank's next stream replaced bytes already read (the offsets
    // then moved past bytes that never reached the record), or went to the wrong rank; found
    // by fuzz_slurm (corpus/slurm/crash-data-of-another-rank).
    for (const char *bad :
         {"@rank rank0.a1 1|\n@data rank0.a1 out 1\na@data rank0.a1 out 1\nb@end\n",
          "@rank rank0.a1 1|\n@data rank1.a1 out 1\na@end\n",
          "@rank rank0.a1 1|\n@data rank0.a1 log 1\na@end\n", "@rank rank0.a1 1\n@end\n"}) {
        QVERIFY2(!SlurmScript::parsePoll(bad, &reply, &error), bad);
        QVERIFY(!error.isEmpty());
    }
}

void TestSlurmScript::endKeepsSlurmsTextAsItIs()
{
    // A second arg() filled the "%3" of Slurm's own state text with the restarts count.
    SlurmJobState s = SlurmJobState::fromScontrol("JobId=5 JobState=PREEMPTED%3 Restarts=2");
    QCOMPARE(
        s.describeEnd(),
        QStringLiteral("Slurm job 5 was preempted (PREEMPTED%3, restarts 2): its ranks were lost"));
    s = SlurmJobState::fromScontrol("JobId=5 JobState=WEIRD%3 ExitCode=7:0");
    QCOMPARE(s.describeEnd(), QStringLiteral("Slurm job 5 ended (WEIRD%3, exit code 7)"));
}

QTEST_GUILESS_MAIN(TestSlurmScript)
#include "tst_slurmscript.moc"
