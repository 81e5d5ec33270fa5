// SPDX-License-Identifier: GPL-3.0-or-later
//
// A SIGKILLed GUI (issue #18), the GUI's half of reliability.md's killed-launcher promise; the
// CLI's half is in tst_cli_e2e, tst_programlaunch and tst_detach. The GUI has to be a process
// of its own to be killed:
// - local: the real `rankdeck --demo` (2 ranks of the worker on the built-in local profile);
//   its ranks must be gone within 5 s of the SIGKILL.
// - SSH (2 sshd nodes, 1 rank of Gloo training each): this binary again, in a child mode that
//   opens the real MainWindow and launches through the real LaunchDialog with clicks, the
//   Detach box ticked or not, then runs until it is killed. Not detached: everything of the run
//   gone from both nodes within 5 s (the orphan grace is 4 s). Detached: the ranks go on, and
//   `rankdeck-cli attach RUN` recovers every line each rank wrote exactly once, leaving nothing
//   of the run on the nodes.
#include "guisshlaunch.h"
#include "mainwindow.h"
#include "run/runcontroller.h"
#include "sshfixture.h"

#include "testprocesses.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include <algorithm>
#include <climits>
#include <csignal>
#include <cstdio>

#include <sys/prctl.h>

using namespace rankdeck;
using rankdeck::testing::processesMatching;
using rankdeck::testing::processesOfRun;
using rankdeck::testing::readJson;

namespace {

// The child mode: set in the environment of this binary started again as the GUI to kill.
constexpr const char *ChildModeVariable = "TST_GUIKILL_CHILD";
constexpr const char *ChildStepsVariable = "TST_GUIKILL_STEPS";
constexpr const char *Profile2Nodes = "sshpair";
constexpr qint64 PromisedMs = 5000;

// The lowest step any rank of the record has reached (-1 while the record lists no ranks).
int lowestStep(const QJsonObject &state)
{
    const QJsonArray ranks = state.value(QStringLiteral("ranks")).toArray();
    if (ranks.isEmpty())
        return -1;
    int lowest = INT_MAX;
    for (const QJsonValue &r : ranks)
        lowest = std::min(lowest, r.toObject().value(QStringLiteral("step")).toInt(-1));
    return lowest;
}

// The GUI to be killed, as a user drives it (launchThroughTheForm). Says "run ID" on stdout
// once launched and "stepping" once every rank has stepped twice, then runs until killed.
int guiChild(int argc, char **argv, bool detach, int steps)
{
    // A test that dies (ctest's timeout) takes its GUI along rather than leave it running.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    QApplication app(argc, argv);
    QCoreApplication::setOrganizationName(QStringLiteral("rankdeck-test"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_guikill"));
    MainWindow window;
    window.show();
    QString why = QStringLiteral("the window was never exposed");
    RunController *run =
        QTest::qWaitForWindowExposed(&window)
            ? rankdeck::testing::launchThroughTheForm(
                  &window, QString::fromLatin1(Profile2Nodes), steps,
                  QStringLiteral("--backend gloo --step-delay-ms 100 --log-every 1"), detach, &why)
            : nullptr;
    if (!run) {
        std::fprintf(stderr, "tst_guikill child: %s\n", qPrintable(why));
        return 2;
    }
    std::printf("run %s\n", qPrintable(run->runId()));
    std::fflush(stdout);
    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, &poll, [&poll, run] {
        if (isTerminal(run->state())) {
            std::printf("ended %s\n", qPrintable(runStateName(run->state())));
        } else if (run->allRanksStarted() && run->rankStatus(0).step >= 2 &&
                   run->rankStatus(1).step >= 2) {
            std::printf("stepping\n");
        } else {
            return;
        }
        std::fflush(stdout);
        poll.stop();
    });
    poll.start(50);
    return app.exec();
}

} // namespace

class TestGuiKill : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase();
    void cleanup();
    void localRanksEndWithTheGui();
    void sshRanksOfAnAttachedRunEndWithTheGui();
    void sshRanksOfADetachedRunGoOnAndAttachRecoversEveryLine();

private:
    // Starts the GUI child on the SSH profile and waits until its ranks step; the run's id, or
    // empty (with a test failure) when it did not get there.
    QString startSshGui(bool detach, int steps);
    // SIGKILLs the GUI and reaps it; the clock starts at the kill.
    void killGui(QElapsedTimer *clock);
    QString localRecord(const QString &runId) const
    {
        return m_tmp.filePath(QStringLiteral("XDG_DATA_HOME/rankdeck/runs/")) + runId;
    }
    QString nodeRunDir(int node, const QString &runId) const
    {
        return rankdeck::testing::nodeRunDirectory(m_ssh, node, runId);
    }

    SshFixture m_ssh;
    QString m_sshUnavailable;
    QTemporaryDir m_tmp;
    QString m_bin;
    QProcess m_gui;
    QString m_runId;
};

void TestGuiKill::initTestCase()
{
    m_bin = qEnvironmentVariable("RANKDECK_BIN_DIR");
    const QString worker = m_bin + QStringLiteral("/rankdeck-worker");
    if (!QFileInfo(worker).isExecutable())
        QSKIP("rankdeck-worker is not built (RANKDECK_BUILD_WORKER=OFF)");
    QVERIFY(QFileInfo(m_bin + QStringLiteral("/rankdeck")).isExecutable());
    QVERIFY(QFileInfo(m_bin + QStringLiteral("/rankdeck-cli")).isExecutable());
    qputenv("RANKDECK_WORKER", QFile::encodeName(worker));
    QVERIFY(m_tmp.isValid());
    // The GUI children, rankdeck-cli and ProfileStore here all inherit these.
    QVERIFY(rankdeck::testing::isolateUserDirectories(m_tmp.path()));
    m_gui.setProcessChannelMode(QProcess::ForwardedErrorChannel);

    m_sshUnavailable = SshFixture::unavailableReason();
    if (!m_sshUnavailable.isEmpty())
        return; // the local case needs none of it
    QVERIFY2(m_ssh.start(2), qPrintable(m_ssh.lastError()));
    QVERIFY(m_ssh.writeKnownHosts(m_tmp.filePath(QStringLiteral("HOME/.ssh/known_hosts"))));
    const QString why =
        rankdeck::testing::saveSshPairProfile(m_ssh, QString::fromLatin1(Profile2Nodes));
    QVERIFY2(why.isEmpty(), qPrintable(why));
}

void TestGuiKill::cleanup()
{
    if (m_gui.state() != QProcess::NotRunning) {
        m_gui.kill();
        m_gui.waitForFinished(10000);
    }
    // Whatever way the test ended, nothing of its run stays behind.
    if (!m_runId.isEmpty()) {
        for (const QString &line : processesMatching(m_runId) + processesOfRun(m_runId)) {
            const qint64 pid = line.section(u' ', 0, 0).toLongLong();
            if (pid > 0)
                ::kill(pid_t(pid), SIGKILL);
        }
    }
    m_runId.clear();
}

void TestGuiKill::killGui(QElapsedTimer *clock)
{
    clock->start();
    QCOMPARE(::kill(pid_t(m_gui.processId()), SIGKILL), 0);
    QVERIFY(m_gui.waitForFinished(10000));
    QCOMPARE(m_gui.exitStatus(), QProcess::CrashExit);
}

void TestGuiKill::localRanksEndWithTheGui()
{
    m_gui.setProcessEnvironment(QProcessEnvironment::systemEnvironment());
    m_gui.start(m_bin + QStringLiteral("/rankdeck"), {QStringLiteral("--demo")});
    QVERIFY2(m_gui.waitForStarted(), qPrintable(m_gui.errorString()));
    const QString runs = m_tmp.filePath(QStringLiteral("XDG_DATA_HOME/rankdeck/runs"));
    QTRY_VERIFY_WITH_TIMEOUT(
        (m_runId = QDir(runs).entryList({QStringLiteral("*-demo-*")}, QDir::Dirs).value(0),
         !m_runId.isEmpty()),
        30000);
    // Running for real: both ranks have stepped, and the record names the GUI as the launcher.
    QTRY_VERIFY_WITH_TIMEOUT(
        lowestStep(readJson(localRecord(m_runId) + QStringLiteral("/state.json"))) >= 1, 120000);
    const QJsonObject state = readJson(localRecord(m_runId) + QStringLiteral("/state.json"));
    QCOMPARE(state.value(QStringLiteral("launcher_pid")).toInteger(), m_gui.processId());
    const QStringList ranks = processesOfRun(m_runId);
    QVERIFY2(ranks.size() >= 2, qPrintable(ranks.join(u", ")));
    qInfo("the demo run %s: %s", qPrintable(m_runId), qPrintable(ranks.join(u", ")));

    QElapsedTimer clock;
    killGui(&clock);
    // The ranks see their control channel close and end by themselves.
    const bool gone =
        QTest::qWaitFor([&] { return processesOfRun(m_runId).isEmpty(); }, 3 * PromisedMs);
    const qint64 ended = clock.elapsed();
    QVERIFY2(gone, qPrintable(processesOfRun(m_runId).join(u", ")));
    qInfo("the local ranks ended %lld ms after the GUI's SIGKILL", ended);
    QVERIFY2(ended <= PromisedMs, qPrintable(QStringLiteral("%1 ms").arg(ended)));
    // The record left behind says what happened: the run's launcher is gone.
    const rankdeck::testing::CommandResult listed = rankdeck::testing::runCommand(
        m_bin + QStringLiteral("/rankdeck-cli"), {QStringLiteral("runs")},
        QProcessEnvironment::systemEnvironment(), 30000);
    QVERIFY2(listed.out.contains(QRegularExpression(QRegularExpression::escape(m_runId) +
                                                    QStringLiteral(".*launcher gone"))),
             qPrintable(listed.out + listed.err));
}

QString TestGuiKill::startSshGui(bool detach, int steps)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QString::fromLatin1(ChildModeVariable),
               detach ? QStringLiteral("detached") : QStringLiteral("attached"));
    env.insert(QString::fromLatin1(ChildStepsVariable), QString::number(steps));
    m_gui.setProcessEnvironment(env);
    m_gui.start(QCoreApplication::applicationFilePath(), {});
    [&] { QVERIFY2(m_gui.waitForStarted(), qPrintable(m_gui.errorString())); }();
    QString runId;
    QElapsedTimer clock;
    clock.start();
    QByteArray said;
    while (clock.isValid() && clock.elapsed() < 120000 && m_gui.state() == QProcess::Running) {
        if (!m_gui.canReadLine() && !m_gui.waitForReadyRead(1000))
            continue;
        while (m_gui.canReadLine()) {
            const QByteArray line = m_gui.readLine().trimmed();
            said += line + '\n';
            if (line.startsWith("run "))
                m_runId = runId = QString::fromUtf8(line.mid(4));
            else if (line == "stepping" && !runId.isEmpty())
                return runId;
            else if (line.startsWith("ended "))
                clock.invalidate(); // before its ranks stepped: no point waiting on
        }
    }
    [&] {
        QFAIL(qPrintable(QStringLiteral("the GUI did not get its ranks stepping (it said: %1)")
                             .arg(QString::fromUtf8(said))));
    }();
    return {};
}

void TestGuiKill::sshRanksOfAnAttachedRunEndWithTheGui()
{
    if (!m_sshUnavailable.isEmpty())
        QSKIP(qPrintable(m_sshUnavailable));
    const QString runId = startSshGui(false, 100000);
    QVERIFY(!runId.isEmpty());
    const QStringList before = processesMatching(runId);
    QVERIFY2(!before.isEmpty(), "no process of the run on the nodes");

    QElapsedTimer clock;
    killGui(&clock);
    // The nodes wait the profile's orphan grace (a killed launcher looks like a reset that a
    // live one re-establishes), then end the ranks and everything of the run.
    const bool gone =
        QTest::qWaitFor([&] { return processesMatching(runId).isEmpty(); }, 4 * PromisedMs);
    const qint64 ended = clock.elapsed();
    QVERIFY2(gone, qPrintable(processesMatching(runId).join(u", ")));
    qInfo("everything of the SSH run that was not detached ended %lld ms after the GUI's "
          "SIGKILL",
          ended);
    QVERIFY2(ended <= PromisedMs, qPrintable(QStringLiteral("%1 ms").arg(ended)));
}

void TestGuiKill::sshRanksOfADetachedRunGoOnAndAttachRecoversEveryLine()
{
    if (!m_sshUnavailable.isEmpty())
        QSKIP(qPrintable(m_sshUnavailable));
    const int steps = 120;
    const QString runId = startSshGui(true, steps);
    QVERIFY(!runId.isEmpty());
    // Killed mid-stream, with a good part of the run already in the GUI's record.
    const QString local = localRecord(runId);
    QTRY_VERIFY_WITH_TIMEOUT(
        rankdeck::testing::fileLines(local + QStringLiteral("/rank-1.log")).size() >= 20, 60000);
    QElapsedTimer clock;
    killGui(&clock);
    // What the GUI had recorded when it died: the attach must add the rest, no more, no less.
    const qsizetype byTheGui =
        rankdeck::testing::fileLines(local + QStringLiteral("/rank-1.log")).size();

    // Well past the orphan grace the ranks still run and print, with no launcher at all.
    QTest::qWait(int(PromisedMs));
    QVERIFY2(!processesMatching(runId).isEmpty(), "the ranks did not outlive the killed GUI");
    const QString out1 = nodeRunDir(1, runId) + QStringLiteral("/rank1.a1.out");
    const qint64 size = QFileInfo(out1).size();
    QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(out1).size() > size, 10000);
    qInfo("the detached run's ranks still print %lld ms after the GUI's SIGKILL", clock.elapsed());

    const rankdeck::testing::CommandResult attached = rankdeck::testing::runCommand(
        m_bin + QStringLiteral("/rankdeck-cli"),
        {QStringLiteral("attach"), runId, QStringLiteral("--no-progress")},
        QProcessEnvironment::systemEnvironment(), 180000);
    QVERIFY2(attached.code == 0, qPrintable(attached.err + attached.out));

    // Every line each rank wrote on its node is in the record exactly once: what the GUI read
    // before its death and what the attach read after it, with no overlap and no gap.
    const qsizetype all =
        rankdeck::testing::fileLines(local + QStringLiteral("/rank-1.log")).size();
    qInfo("rank 1: %lld log lines recorded by the GUI before its SIGKILL, %lld in all after the "
          "attach",
          qint64(byTheGui), qint64(all));
    QVERIFY2(byTheGui > 0 && byTheGui < all, "the GUI or the attach recorded nothing of rank 1");
    for (int rank = 0; rank < 2; ++rank) {
        const QString why = rankdeck::testing::recordMismatch(
            nodeRunDir(rank, runId) + QStringLiteral("/rank%1.a1").arg(rank), local, rank, steps);
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }
    const QJsonObject done = readJson(local + QStringLiteral("/state.json"));
    QCOMPARE(done.value(QStringLiteral("state")).toString(), QStringLiteral("finished"));
    QVERIFY2(QTest::qWaitFor([&] { return processesMatching(runId).isEmpty(); }, 15000),
             qPrintable(processesMatching(runId).join(u", ")));
}

int main(int argc, char **argv)
{
    if (const QByteArray mode = qgetenv(ChildModeVariable); !mode.isEmpty())
        return guiChild(argc, argv, mode == "detached",
                        qEnvironmentVariableIntValue(ChildStepsVariable));
    QApplication app(argc, argv);
    app.setAttribute(Qt::AA_Use96Dpi, true);
    TestGuiKill test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "tst_guikill.moc"
