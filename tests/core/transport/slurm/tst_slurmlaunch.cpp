// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Slurm transport end to end on a real cluster (tests/common/slurmfixture.h: munged,
// slurmctld, two slurmd in multiple-slurmd mode) through the CLI, with the real worker:
// 2 nodes × 2 ranks of mlp finish with every rank's lines in the record exactly once; a
// segfault on rank 3 is the root cause with its stack and ends the job; stop in the middle; a
// job asking for more nodes than exist shows its pending reason and stops; a launcher killed
// mid-run is taken over by `attach` with no line lost or doubled; an outside scancel is named
// as such; a user's program (--exec); the collective verdict of a worker whose rank 1 skips a
// bucket all-reduce (issue 26); bad partition and a missing sbatch give clear errors.
// After each: no job of the run in squeue, no process of the run on the machine.
#include "config/profile.h"
#include "config/profilestore.h"
#include "fixtureprofile.h"
#include "slurmfixture.h"
#include "sshfixture.h"
#include "testprocesses.h"
#include "transport/slurm/slurmsettings.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

using namespace rankdeck;
using rankdeck::testing::fileLines;
using rankdeck::testing::processesOfRun;
using rankdeck::testing::readJson;
using rankdeck::testing::recordMismatch;

class TestSlurmLaunch : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void fixtureRunsTasksOnTwoNodes();
    void trainingOnTwoNodesLosesNoLine();
    void plantedBinaryIsNeverRun_data();
    void plantedBinaryIsNeverRun();
    void throughAnSshLoginNode();
    void segfaultOnRank3IsTheRootCause();
    void stopInTheMiddle();
    void tooManyNodesPendsAndStops();
    void killedLauncherThenAttachRecoversEveryLine();
    void outsideScancelIsReportedAsSuch();
    void usersProgramRunsOnSlurm();
    void desyncOfTheWorkerIsNamed();
    void badInputNamesWhatIsWrong_data();
    void badInputNamesWhatIsWrong();

private:
    struct Run
    {
        int exitCode = -1;
        QString output;
        QString runId;
    };
    bool saveProfile(const QString &name, int nodes, const QString &partition = QString(),
                     const QString &sharedDir = QString());
    QStringList runIds() const;
    Run launch(const QString &profile, const QStringList &args, int timeoutMs = 240000,
               const QProcessEnvironment &env = QProcessEnvironment::systemEnvironment());
    // Starts a launch in the background and waits until its record has a run with some lines.
    QString startAndWait(QProcess *cli, const QString &profile, const QStringList &args,
                         const QString &waitFor);
    testing::CommandResult cli(const QStringList &args, int timeoutMs = 120000);
    QString sharedRunDir(const QString &runId) const
    {
        return m_tmp.filePath(QStringLiteral("shared/runs/") + runId);
    }
    QString runDir(const QString &runId) const { return m_runsDir + QLatin1Char('/') + runId; }
    void verifyNothingLeft(const QString &runId);
    static QStringList mlp(int steps, int delayMs);

    SlurmFixture m_slurm;
    QTemporaryDir m_tmp;
    QString m_cli;
    QString m_runsDir;
};

void TestSlurmLaunch::initTestCase()
{
    if (const QString why = SlurmFixture::unavailableReason(); !why.isEmpty())
        QSKIP(qPrintable(why));
    const QString bin = qEnvironmentVariable("RANKDECK_BIN_DIR");
    m_cli = bin + QStringLiteral("/rankdeck-cli");
    if (!QFileInfo(bin + QStringLiteral("/rankdeck-worker")).isExecutable())
        QSKIP("rankdeck-worker is not built (RANKDECK_BUILD_WORKER=OFF)");
    QVERIFY(QFileInfo(m_cli).isExecutable());
    QVERIFY(m_tmp.isValid());
    QVERIFY(rankdeck::testing::isolateUserDirectories(m_tmp.path()));
    m_runsDir = m_tmp.filePath(QStringLiteral("XDG_DATA_HOME/rankdeck/runs"));
    QVERIFY2(m_slurm.start(2), qPrintable(m_slurm.lastError()));
    QVERIFY(saveProfile(QStringLiteral("slurm2"), 2, m_slurm.partition()));
}

void TestSlurmLaunch::cleanupTestCase()
{
    m_slurm.stop();
}

bool TestSlurmLaunch::saveProfile(const QString &name, int nodes, const QString &partition,
                                  const QString &sharedDir)
{
    Profile p;
    p.name = name;
    p.transport = QStringLiteral("slurm");
    p.backend = QStringLiteral("gloo");
    p.rendezvousTimeoutSec = 60;
    p.heartbeatTimeoutSec = 30;
    SlurmSettings slurm;
    slurm.partition = partition;
    slurm.nodes = nodes;
    slurm.nprocPerNode = 2;
    slurm.sharedDir = sharedDir.isEmpty() ? m_tmp.filePath(QStringLiteral("shared")) : sharedDir;
    slurm.applyTo(&p);
    QString error;
    if (!ProfileStore().save(p, true, &error)) {
        qWarning("%s", qPrintable(error));
        return false;
    }
    return true;
}

QStringList TestSlurmLaunch::mlp(int steps, int delayMs)
{
    return {QStringLiteral("--task"),          QStringLiteral("mlp"),
            QStringLiteral("--steps"),         QString::number(steps),
            QStringLiteral("--backend"),       QStringLiteral("gloo"),
            QStringLiteral("--step-delay-ms"), QString::number(delayMs)};
}

QStringList TestSlurmLaunch::runIds() const
{
    return QDir(m_runsDir).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
}

TestSlurmLaunch::Run TestSlurmLaunch::launch(const QString &profile, const QStringList &args,
                                             int timeoutMs, const QProcessEnvironment &env)
{
    const QStringList before = runIds();
    const testing::CommandResult r =
        testing::runCommand(m_cli,
                            QStringList{QStringLiteral("launch"), QStringLiteral("--profile"),
                                        profile, QStringLiteral("--no-progress")} +
                                args,
                            env, timeoutMs);
    Run run;
    run.exitCode = r.code;
    run.output = r.out + r.err;
    for (const QString &d : runIds())
        if (!before.contains(d))
            run.runId = d;
    QStringList notes = run.output.split(u'\n');
    notes.removeIf([](const QString &line) { return line.startsWith(u'['); });
    qInfo("rankdeck-cli launch: exit %d\n%s", run.exitCode, qPrintable(notes.join(u'\n')));
    return run;
}

QString TestSlurmLaunch::startAndWait(QProcess *cli, const QString &profile,
                                      const QStringList &args, const QString &waitFor)
{
    const QStringList before = runIds();
    cli->setProcessChannelMode(QProcess::MergedChannels);
    cli->start(m_cli, QStringList{QStringLiteral("launch"), QStringLiteral("--profile"), profile,
                                  QStringLiteral("--no-progress")} +
                          args);
    QString runId;
    QByteArray seen;
    QDeadlineTimer deadline(120000);
    while (!deadline.hasExpired() && cli->state() != QProcess::NotRunning) {
        cli->waitForReadyRead(200);
        seen += cli->readAll();
        for (const QString &d : runIds())
            if (!before.contains(d))
                runId = d;
        if (!runId.isEmpty() && QString::fromUtf8(seen).contains(waitFor))
            return runId;
    }
    qWarning("never saw \"%s\":\n%s", qPrintable(waitFor), seen.constData());
    return {};
}

testing::CommandResult TestSlurmLaunch::cli(const QStringList &args, int timeoutMs)
{
    const testing::CommandResult r =
        testing::runCommand(m_cli, args, QProcessEnvironment::systemEnvironment(), timeoutMs);
    qInfo("rankdeck-cli %s: exit %d\n%s", qPrintable(args.value(0)), r.code, qPrintable(r.err));
    return r;
}

void TestSlurmLaunch::verifyNothingLeft(const QString &runId)
{
    // Every job of the fixture's cluster is one of these tests'; none may be left behind.
    QVERIFY2(m_slurm.waitForNoJobs(30000), qPrintable(m_slurm.jobs().join(u' ')));
    QTRY_VERIFY2_WITH_TIMEOUT(processesOfRun(runId).isEmpty(),
                              qPrintable(processesOfRun(runId).join(u'\n')), 20000);
}

void TestSlurmLaunch::fixtureRunsTasksOnTwoNodes()
{
    // The fixture itself: one job, 2 nodes × 2 tasks, each task sees its Slurm identity.
    const QString out = m_tmp.filePath(QStringLiteral("fixture-%t.out"));
    QString error;
    const QByteArray id = m_slurm.command(
        QStringLiteral("sbatch"),
        {QStringLiteral("--parsable"), QStringLiteral("--nodes=2"),
         QStringLiteral("--ntasks-per-node=2"), QStringLiteral("--output=/dev/null"),
         QStringLiteral("--wrap"),
         QStringLiteral("srun -K1 -o %1 sh -c 'echo $SLURM_PROCID $SLURM_LOCALID $SLURM_NODEID "
                        "$SLURMD_NODENAME'")
             .arg(out)},
        &error);
    QVERIFY2(!id.isEmpty(), qPrintable(error));
    QVERIFY(m_slurm.waitForNoJobs(60000));
    QStringList lines;
    for (int t = 0; t < 4; ++t)
        lines << QString::fromUtf8(
            fileLines(m_tmp.filePath(QStringLiteral("fixture-%1.out").arg(t))).value(0));
    QCOMPARE(lines, QStringList({QStringLiteral("0 0 0 n1"), QStringLiteral("1 1 0 n1"),
                                 QStringLiteral("2 0 1 n2"), QStringLiteral("3 1 1 n2")}));
}

void TestSlurmLaunch::trainingOnTwoNodesLosesNoLine()
{
    const testing::CommandResult check =
        cli({QStringLiteral("profiles"), QStringLiteral("check"), QStringLiteral("slurm2")});
    QVERIFY2(check.code == 0 &&
                 check.out.contains(QStringLiteral("sbatch, squeue and scancel answer")),
             qPrintable(check.out + check.err));
    const int steps = 20;
    const Run r =
        launch(QStringLiteral("slurm2"), QStringList{QStringLiteral("--")} + mlp(steps, 0));
    QVERIFY2(r.exitCode == 0, qPrintable(r.output));
    QVERIFY(!r.runId.isEmpty());
    for (int rank = 0; rank < 4; ++rank) {
        const QString mismatch =
            recordMismatch(sharedRunDir(r.runId) + QStringLiteral("/rank%1.a1").arg(rank),
                           runDir(r.runId), rank, steps);
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }
    // The batch script is in the record, exactly as sbatch got it, and `show --script` prints it.
    const testing::CommandResult script =
        cli({QStringLiteral("show"), r.runId, QStringLiteral("--script")});
    QCOMPARE(script.code, 0);
    QVERIFY2(script.out.contains(QStringLiteral("#SBATCH --nodes=2")), qPrintable(script.out));
    QVERIFY(script.out.contains(QStringLiteral("srun --kill-on-bad-exit=1")));
    QFile submitted(sharedRunDir(r.runId) + QStringLiteral("/job.a1.sbatch"));
    QVERIFY(submitted.open(QIODevice::ReadOnly));
    QCOMPARE(script.out.toUtf8(), submitted.readAll());
    // The worker went to the shared directory once, content-hashed.
    QCOMPARE(QDir(m_tmp.filePath(QStringLiteral("shared/bin")))
                 .entryList({QStringLiteral("rankdeck-worker-*")}, QDir::Files)
                 .size(),
             1);
    verifyNothingLeft(r.runId);
}

void TestSlurmLaunch::plantedBinaryIsNeverRun_data()
{
    QTest::addColumn<QString>("kind");
    // What another user who can write to the shared directory leaves under the worker's public
    // name (issue 29, problem 2): an executable that every rank would run.
    QTest::newRow("planted under the worker's name") << QStringLiteral("planted");
    QTest::newRow("shared directory others may write to") << QStringLiteral("open");
}

void TestSlurmLaunch::plantedBinaryIsNeverRun()
{
    QFETCH(QString, kind);
    const QString worker =
        qEnvironmentVariable("RANKDECK_BIN_DIR") + QStringLiteral("/rankdeck-worker");
    QFile real(worker);
    QVERIFY(real.open(QIODevice::ReadOnly));
    QCryptographicHash hash(QCryptographicHash::Sha256);
    QVERIFY(hash.addData(&real));
    const QString shared = m_tmp.filePath(
        kind == QLatin1String("open") ? QStringLiteral("shared-open") : QStringLiteral("shared"));
    const QString name =
        QStringLiteral("rankdeck-worker-") + QString::fromLatin1(hash.result().toHex());
    const QString marker = m_tmp.filePath(QStringLiteral("planted-binary-ran"));
    QVERIFY(QDir().mkpath(shared + QStringLiteral("/bin")));
    if (kind == QLatin1String("open"))
        QVERIFY(QFile::setPermissions(shared, QFileDevice::Permissions(0x7777)));
    QFile::remove(shared + QStringLiteral("/bin/") + name);
    QVERIFY(testing::writeFile(shared + QStringLiteral("/bin/") + name,
                               "#!/bin/sh\necho planted >" + marker.toUtf8() + "\nexit 0\n", true));
    QVERIFY(saveProfile(QStringLiteral("slurmplanted"), 2, m_slurm.partition(), shared));
    const Run r =
        launch(QStringLiteral("slurmplanted"), QStringList{QStringLiteral("--")} + mlp(3, 0));
    QVERIFY2(!QFile::exists(marker), "the planted binary ran");
    if (kind == QLatin1String("open")) {
        QVERIFY(r.exitCode != 0);
        QVERIFY2(r.output.contains(QStringLiteral("refusing ") + shared), qPrintable(r.output));
        QVERIFY(m_slurm.jobs().isEmpty());
        return;
    }
    QVERIFY2(r.exitCode == 0, qPrintable(r.output));
    // The real worker took the name back.
    QFile deployed(shared + QStringLiteral("/bin/") + name);
    QVERIFY(deployed.open(QIODevice::ReadOnly) && real.seek(0));
    QVERIFY(deployed.readAll() == real.readAll());
    verifyNothingLeft(r.runId);
}

void TestSlurmLaunch::throughAnSshLoginNode()
{
    // The login node is an sshd whose sessions see the cluster (SLURM_CONF, as a real login
    // node's shell would): sbatch, the polls and the deployment all go over that one session.
    if (const QString why = SshFixture::unavailableReason(); !why.isEmpty())
        QSKIP(qPrintable(why));
    SshFixture ssh;
    SshFixture::Options options;
    options.environment = {QStringLiteral("SLURM_CONF=") + m_slurm.slurmConf()};
    ssh.setOptions(options);
    QVERIFY2(ssh.start(1), qPrintable(ssh.lastError()));
    QVERIFY(ssh.writeKnownHosts(m_tmp.filePath(QStringLiteral("HOME/.ssh/known_hosts"))));
    Profile p;
    p.name = QStringLiteral("slurmssh");
    p.transport = QStringLiteral("slurm");
    p.backend = QStringLiteral("gloo");
    SlurmSettings slurm;
    slurm.login = ssh.address(0);
    slurm.port = ssh.port(0);
    slurm.user = ssh.user();
    slurm.identityFile = ssh.clientKey();
    slurm.partition = m_slurm.partition();
    slurm.nodes = 2;
    slurm.nprocPerNode = 2;
    slurm.sharedDir = m_tmp.filePath(QStringLiteral("shared-ssh"));
    slurm.applyTo(&p);
    QString error;
    QVERIFY2(ProfileStore().save(p, true, &error), qPrintable(error));
    // The launcher's own environment has no SLURM_CONF: everything must go through the login.
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("SLURM_CONF"));
    const int steps = 15;
    const Run r = launch(QStringLiteral("slurmssh"),
                         QStringList{QStringLiteral("--")} + mlp(steps, 0), 240000, env);
    QVERIFY2(r.exitCode == 0, qPrintable(r.output));
    for (int rank = 0; rank < 4; ++rank) {
        const QString mismatch = recordMismatch(
            m_tmp.filePath(QStringLiteral("shared-ssh/runs/%1/rank%2.a1").arg(r.runId).arg(rank)),
            runDir(r.runId), rank, steps);
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }
    QVERIFY(ssh.log(0).contains("Accepted publickey"));
    verifyNothingLeft(r.runId);
}

void TestSlurmLaunch::segfaultOnRank3IsTheRootCause()
{
    const Run r = launch(QStringLiteral("slurm2"),
                         QStringList{QStringLiteral("--")} + mlp(200, 20) +
                             QStringList{QStringLiteral("--fault"), QStringLiteral("segv@5"),
                                         QStringLiteral("--fault-rank"), QStringLiteral("3")});
    QVERIFY2(r.exitCode == 1, qPrintable(r.output));
    const QJsonObject state = readJson(runDir(r.runId) + QStringLiteral("/state.json"));
    QCOMPARE(state.value(QStringLiteral("root_cause_rank")).toInt(-1), 3);
    const testing::CommandResult show = cli({QStringLiteral("show"), r.runId});
    QVERIFY2(show.out.contains(QStringLiteral("SIGSEGV")), qPrintable(show.out));
    // Its stack: the crash handler's frames reach the record through the rank's stream.
    const QJsonObject report = readJson(runDir(r.runId) + QStringLiteral("/failure.json"));
    QVERIFY2(QJsonDocument(report).toJson().contains("stack"), qPrintable(show.out));
    QVERIFY2(show.out.contains(QStringLiteral("faultinjection")) ||
                 show.out.contains(QStringLiteral("#0")),
             qPrintable(show.out));
    verifyNothingLeft(r.runId);
}

void TestSlurmLaunch::stopInTheMiddle()
{
    QProcess launcher;
    const QString runId =
        startAndWait(&launcher, QStringLiteral("slurm2"),
                     QStringList{QStringLiteral("--")} + mlp(2000, 50), QStringLiteral("[r3]"));
    QVERIFY(!runId.isEmpty());
    QCOMPARE(cli({QStringLiteral("stop"), runId}).code, 0);
    QVERIFY(launcher.waitForFinished(60000));
    const QJsonObject state = readJson(runDir(runId) + QStringLiteral("/state.json"));
    QCOMPARE(state.value(QStringLiteral("state")).toString(), QStringLiteral("stopped"));
    verifyNothingLeft(runId);
}

void TestSlurmLaunch::tooManyNodesPendsAndStops()
{
    QVERIFY(saveProfile(QStringLiteral("slurm3"), 3, m_slurm.partition()));
    QProcess launcher;
    const QString runId =
        startAndWait(&launcher, QStringLiteral("slurm3"),
                     QStringList{QStringLiteral("--")} + mlp(10, 0), QStringLiteral("pending ("));
    QVERIFY(!runId.isEmpty());
    QCOMPARE(m_slurm.jobs(QStringLiteral("PENDING")).size(), 1);
    QCOMPARE(cli({QStringLiteral("stop"), runId}).code, 0);
    QVERIFY(launcher.waitForFinished(60000));
    const QString out = QString::fromUtf8(launcher.readAll());
    const QJsonObject state = readJson(runDir(runId) + QStringLiteral("/state.json"));
    QVERIFY2(state.value(QStringLiteral("state")).toString() == QLatin1String("stopped"),
             qPrintable(out));
    verifyNothingLeft(runId);
}

void TestSlurmLaunch::killedLauncherThenAttachRecoversEveryLine()
{
    const int steps = 60;
    QProcess launcher;
    const QString runId = startAndWait(&launcher, QStringLiteral("slurm2"),
                                       QStringList{QStringLiteral("--")} + mlp(steps, 100),
                                       QStringLiteral("Rank 3: Epoch 5"));
    QVERIFY(!runId.isEmpty());
    launcher.kill(); // SIGKILL: no goodbye, no scancel
    QVERIFY(launcher.waitForFinished(10000));
    // The job goes on without anyone following it.
    QCOMPARE(m_slurm.jobs(QStringLiteral("RUNNING")).size(), 1);
    const testing::CommandResult attached =
        cli({QStringLiteral("attach"), runId, QStringLiteral("--no-progress")}, 240000);
    QVERIFY2(attached.code == 0, qPrintable(attached.err + attached.out));
    for (int rank = 0; rank < 4; ++rank) {
        const QString mismatch =
            recordMismatch(sharedRunDir(runId) + QStringLiteral("/rank%1.a1").arg(rank),
                           runDir(runId), rank, steps);
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }
    verifyNothingLeft(runId);
}

void TestSlurmLaunch::outsideScancelIsReportedAsSuch()
{
    QProcess launcher;
    const QString runId =
        startAndWait(&launcher, QStringLiteral("slurm2"),
                     QStringList{QStringLiteral("--")} + mlp(2000, 50), QStringLiteral("[r3]"));
    QVERIFY(!runId.isEmpty());
    const QStringList jobs = m_slurm.jobs(QStringLiteral("RUNNING"));
    QCOMPARE(jobs.size(), 1);
    m_slurm.command(QStringLiteral("scancel"), {jobs.first()});
    QVERIFY(launcher.waitForFinished(60000));
    const QString out = QString::fromUtf8(launcher.readAll());
    QVERIFY2(launcher.exitCode() != 0, qPrintable(out));
    const testing::CommandResult show = cli({QStringLiteral("show"), runId});
    QVERIFY2(show.out.contains(QStringLiteral("cancelled outside RankDeck (scancel)")),
             qPrintable(show.out + out));
    verifyNothingLeft(runId);
}

void TestSlurmLaunch::usersProgramRunsOnSlurm()
{
    const QString python = qEnvironmentVariable("RANKDECK_TORCH_PYTHON");
    if (python.isEmpty())
        QSKIP("no torch Python (RANKDECK_TORCH_PYTHON)");
    const QString script = qEnvironmentVariable("RANKDECK_SOURCE_DIR") +
                           QStringLiteral("/tests/cli/programs/train_ddp.py");
    const Run r = launch(QStringLiteral("slurm2"),
                         {QStringLiteral("--exec"), QStringLiteral("--"), python, script});
    // torch may abort a rank at exit after its last line (see tst_sshlaunch).
    QVERIFY2(r.exitCode == 0 ||
                 r.output.contains(QStringLiteral("terminate called without an active exception")),
             qPrintable(r.output));
    for (int rank = 0; rank < 4; ++rank) {
        int epochs = 0;
        for (const QByteArray &line :
             fileLines(runDir(r.runId) + QStringLiteral("/rank-%1.log").arg(rank)))
            if (line.startsWith(QStringLiteral("Rank %1: Epoch").arg(rank).toUtf8()))
                ++epochs;
        QCOMPARE(epochs, 5);
    }
    QCOMPARE(QDir(m_tmp.filePath(QStringLiteral("shared/bin")))
                 .entryList({QStringLiteral("rankdeck-supervisor-*")}, QDir::Files)
                 .size(),
             1);
    verifyNothingLeft(r.runId);
}

void TestSlurmLaunch::desyncOfTheWorkerIsNamed()
{
    // Rank 1 of 4 skips its bucket all-reduce at step 3: every rank hangs; the flight recorders
    // collected through the job's ranks name rank 1 (the odd one out) before the hang watch.
    QProcess launcher;
    const QString runId = startAndWait(
        &launcher, QStringLiteral("slurm2"),
        {QStringLiteral("--hang-timeout"), QStringLiteral("300"), QStringLiteral("--"),
         QStringLiteral("--task"), QStringLiteral("linear"), QStringLiteral("--steps"),
         QStringLiteral("8"), QStringLiteral("--fault"), QStringLiteral("skip-allreduce@3"),
         QStringLiteral("--fault-rank"), QStringLiteral("1")},
        QStringLiteral("[r3]"));
    QVERIFY(!runId.isEmpty());
    QJsonObject fr;
    QVERIFY2(QTest::qWaitFor(
                 [&] {
                     fr = readJson(runDir(runId) + QStringLiteral("/state.json"))
                              .value(QStringLiteral("flight_recorder"))
                              .toObject();
                     return fr.value(QStringLiteral("verdict_shown")).toBool();
                 },
                 180000),
             QJsonDocument(fr).toJson().constData());
    const QJsonObject verdict = fr.value(QStringLiteral("verdict")).toObject();
    QCOMPARE(verdict.value(QStringLiteral("kind")).toString(), QStringLiteral("desync"));
    QCOMPARE(verdict.value(QStringLiteral("culprits")).toArray(), QJsonArray{1});
    const testing::CommandResult show = cli({QStringLiteral("show"), runId});
    QVERIFY2(show.out.startsWith(QStringLiteral("Why the ranks are stuck")),
             qPrintable(show.out.left(2000)));
    // The dumps are in the record, in torch's layout.
    const QString torch =
        runDir(runId) + QStringLiteral("/flight-recorder/%1/torch")
                            .arg(fr.value(QStringLiteral("verdict_collection")).toInteger());
    QCOMPARE(QDir(torch).entryList({QStringLiteral("rank_*")}, QDir::Files).size(), 4);
    QCOMPARE(cli({QStringLiteral("stop"), runId}).code, 0);
    QVERIFY(launcher.waitForFinished(60000));
    verifyNothingLeft(runId);
}

void TestSlurmLaunch::badInputNamesWhatIsWrong_data()
{
    QTest::addColumn<QString>("partition");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("message");
    QTest::newRow("no such partition") << QStringLiteral("nosuchpart") << QString()
                                       << QStringLiteral("partition \"nosuchpart\" does not exist");
    QTest::newRow("no sbatch") << m_slurm.partition() << QStringLiteral("/nonexistent")
                               << QStringLiteral("sbatch is not there");
}

void TestSlurmLaunch::badInputNamesWhatIsWrong()
{
    QFETCH(QString, partition);
    QFETCH(QString, path);
    QFETCH(QString, message);
    QVERIFY(saveProfile(QStringLiteral("slurmbad"), 2, partition));
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (!path.isEmpty())
        env.insert(QStringLiteral("PATH"), path);
    const Run r = launch(QStringLiteral("slurmbad"), QStringList{QStringLiteral("--")} + mlp(5, 0),
                         60000, env);
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.output.contains(message), qPrintable(r.output));
    // profiles check says the same without launching anything.
    const testing::CommandResult check = testing::runCommand(
        m_cli, {QStringLiteral("profiles"), QStringLiteral("check"), QStringLiteral("slurmbad")},
        env, 60000);
    QVERIFY(check.code != 0);
    QVERIFY2(check.err.contains(message), qPrintable(check.err));
    QVERIFY(m_slurm.jobs().isEmpty());
}

QTEST_GUILESS_MAIN(TestSlurmLaunch)
#include "tst_slurmlaunch.moc"
