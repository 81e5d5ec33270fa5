// SPDX-License-Identifier: GPL-3.0-or-later
//
// Detach and re-attach through the GUI, on two real sshd nodes (tests/common/sshfixture.h) with
// the real worker (2 ranks of Gloo training): launch with the Detach box ticked, close the window
// (which leaves a detachable run running), see the ranks go on on the nodes with no launcher,
// open a new window, find the run marked detached in the run list (its Overview offers Re-attach
// too), re-attach it with the run list's Re-attach action, and follow it to its end. Every line
// each rank wrote on its node must then be in the local record exactly once, and nothing of the run
// may be left on the nodes.
#include "guisshlaunch.h"
#include "mainwindow.h"
#include "models/runlistmodel.h"
#include "overviewpage.h"
#include "run/runcontroller.h"
#include "run/runmanager.h"
#include "runview.h"
#include "sidepanel.h"
#include "sshfixture.h"

#include "testprocesses.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

#include <csignal>

using namespace rankdeck;
using rankdeck::testing::processesMatching;
using rankdeck::testing::readJson;

namespace {

constexpr int Steps = 40;

} // namespace

class TestGuiDetach : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase();
    void cleanup();
    void detachCloseReopenReattach();

private:
    void openWindow();
    QString nodeRunDir(int node, const QString &runId) const
    {
        return rankdeck::testing::nodeRunDirectory(m_ssh, node, runId);
    }

    SshFixture m_ssh;
    QTemporaryDir m_tmp;
    std::unique_ptr<MainWindow> m_window;
    std::unique_ptr<QAbstractItemModelTester> m_runListTester;
    QString m_runId;
};

void TestGuiDetach::initTestCase()
{
    if (const QString why = SshFixture::unavailableReason(); !why.isEmpty())
        QSKIP(qPrintable(why));
    const QString worker =
        qEnvironmentVariable("RANKDECK_BIN_DIR") + QStringLiteral("/rankdeck-worker");
    if (!QFileInfo(worker).isExecutable())
        QSKIP("rankdeck-worker is not built (RANKDECK_BUILD_WORKER=OFF)");
    qputenv("RANKDECK_WORKER", QFile::encodeName(worker));
    QVERIFY(m_tmp.isValid());
    QVERIFY(rankdeck::testing::isolateUserDirectories(m_tmp.path()));
    QCoreApplication::setOrganizationName(QStringLiteral("rankdeck-test"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_guidetach"));
    QVERIFY2(m_ssh.start(2), qPrintable(m_ssh.lastError()));
    QVERIFY(m_ssh.writeKnownHosts(m_tmp.filePath(QStringLiteral("HOME/.ssh/known_hosts"))));

    const QString why = rankdeck::testing::saveSshPairProfile(m_ssh, QStringLiteral("sshpair"));
    QVERIFY2(why.isEmpty(), qPrintable(why));
}

void TestGuiDetach::openWindow()
{
    m_window = std::make_unique<MainWindow>();
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    m_runListTester = std::make_unique<QAbstractItemModelTester>(
        m_window->sidePanel()->runList()->model(),
        QAbstractItemModelTester::FailureReportingMode::QtTest);
}

void TestGuiDetach::cleanup()
{
    if (m_window) {
        for (RunController *run : m_window->runManager()->activeRuns())
            run->kill();
        QTRY_VERIFY_WITH_TIMEOUT(m_window->runManager()->activeRuns().isEmpty(), 20000);
    }
    m_runListTester.reset();
    m_window.reset();
    // Whatever way the test ended, nothing of the run stays on the nodes.
    if (!m_runId.isEmpty()) {
        for (const QString &line : processesMatching(m_runId)) {
            const qint64 pid = line.section(u' ', 0, 0).toLongLong();
            if (pid > 0)
                ::kill(pid_t(pid), SIGKILL);
        }
    }
}

void TestGuiDetach::detachCloseReopenReattach()
{
    openWindow();
    // Launch with clicks: the SSH profile, the Detach box, Launch.
    QString launchProblem;
    RunController *run = rankdeck::testing::launchThroughTheForm(
        m_window.get(), QStringLiteral("sshpair"), Steps,
        QStringLiteral("--backend gloo --step-delay-ms 100 --log-every 1"), true, &launchProblem);
    QVERIFY2(run, qPrintable(launchProblem));
    QCOMPARE(run->worldSize(), 2);
    m_runId = run->runId();
    const QString local = run->runDirectory();

    // Detach once every rank runs and has stepped: closing the window leaves the run going.
    QTRY_VERIFY_WITH_TIMEOUT(run->allRanksStarted() && run->rankStatus(0).step >= 2 &&
                                 run->rankStatus(1).step >= 2,
                             120000);
    QVERIFY(!isTerminal(run->state()));
    QVERIFY(m_window->close());
    m_runListTester.reset();
    m_window.reset();

    const QJsonObject state = readJson(local + QStringLiteral("/state.json"));
    QVERIFY2(state.value(QStringLiteral("detached")).toBool(),
             "closing the window did not detach the run");
    QVERIFY2(!processesMatching(m_runId).isEmpty(), "the ranks did not outlive the window");
    // They keep printing with no window and no controller.
    const QString out1 = nodeRunDir(1, m_runId) + QStringLiteral("/rank1.a1.out");
    const qint64 sizeAtDetach = QFileInfo(out1).size();
    QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(out1).size() > sizeAtDetach, 20000);

    // A new window lists the run as detached and offers Re-attach for it, and only for it.
    openWindow();
    SidePanel *side = m_window->sidePanel();
    QTRY_VERIFY_WITH_TIMEOUT(side->indexOfRun(m_runId, RunListModel::StateColumn).isValid(), 10000);
    QTRY_VERIFY2_WITH_TIMEOUT(
        side->indexOfRun(m_runId, RunListModel::StateColumn)
            .data()
            .toString()
            .contains(QStringLiteral("detached")),
        qPrintable(side->indexOfRun(m_runId, RunListModel::StateColumn).data().toString()), 10000);
    side->runList()->setCurrentIndex(side->indexOfRun(m_runId, RunListModel::StateColumn));
    // Shown from its record, the run's Overview offers Re-attach too.
    OverviewPage *overview = m_window->runView()->overviewPage();
    QTRY_VERIFY_WITH_TIMEOUT(
        m_window->runView()->run() && m_window->runView()->run()->runId() == m_runId, 10000);
    QVERIFY(m_window->runView()->run()->isReadOnly());
    QVERIFY(overview->reattachButton()->isVisibleTo(overview));
    QAction *reattach = side->reattachAction();
    QVERIFY(reattach->isEnabled());
    reattach->trigger();
    RunController *again = m_window->runView()->run();
    QVERIFY2(again && again->runId() == m_runId, "Re-attach did not show the run");
    QVERIFY(m_window->runManager()->activeRuns().contains(again));
    // Driven here now: nothing to re-attach.
    QVERIFY(!overview->reattachButton()->isVisibleTo(overview));
    QTRY_VERIFY_WITH_TIMEOUT(isTerminal(again->state()), 120000);
    QCOMPARE(again->state(), RunState::Finished);
    // The list no longer offers it.
    QTRY_VERIFY(!side->indexOfRun(m_runId, RunListModel::StateColumn)
                     .data()
                     .toString()
                     .contains(QStringLiteral("detached")));

    // Every line each rank wrote on its node is in the record exactly once.
    for (int rank = 0; rank < 2; ++rank) {
        const QString why = rankdeck::testing::recordMismatch(
            nodeRunDir(rank, m_runId) + QStringLiteral("/rank%1.a1").arg(rank), local, rank, Steps);
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }
    const QJsonObject done = readJson(local + QStringLiteral("/state.json"));
    QCOMPARE(done.value(QStringLiteral("state")).toString(), QStringLiteral("finished"));
    QVERIFY(!done.value(QStringLiteral("detached")).toBool());
    QTRY_VERIFY_WITH_TIMEOUT(processesMatching(m_runId).isEmpty(), 15000);
}

QTEST_MAIN(TestGuiDetach)
#include "tst_guidetach.moc"
