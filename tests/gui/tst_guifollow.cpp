// SPDX-License-Identifier: GPL-3.0-or-later
//
// A run that rankdeck-cli drives, chosen in an open window's run list, is followed live (issue
// 31): the Logs page gets the lines printed after it was chosen, the Overview's rank table the
// steps, and the run ends in the window when the CLI ends it. Before, the window showed the
// record as it was at the click. The window and the CLI share a runs directory; the ranks are
// the scripted worker. Its Dump stacks and Kill buttons act on that run (issue 41). Waits are
// QTRY_ with generous limits: a loaded machine is only slower.
#include "logspage.h"
#include "mainwindow.h"
#include "models/logmodel.h"
#include "models/ranktablemodel.h"
#include "models/runlistmodel.h"
#include "overviewpage.h"
#include "run/runcontroller.h"
#include "run/runmanager.h"
#include "runview.h"
#include "sidepanel.h"
#include "store/logstore.h"
#include "testprocesses.h"

#include <QApplication>
#include <QFileInfo>
#include <QLabel>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <QTreeView>
#include <QtTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;

class TestGuiFollow : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_home;
    QString m_cli;

    QProcessEnvironment cliEnvironment() const
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"RANKDECK_WORKER"_s,
                   QCoreApplication::applicationDirPath() + u"/scriptedworker"_s);
        return env;
    }

    // Waits for the running run `name` that rankdeck-cli drives to show in the run list, picks
    // it there as a user does, and waits for the window to follow it: *run is the read-only
    // controller it follows it with (untouched when a check failed).
    static void pickRunningRun(MainWindow &window, const QString &name, RunController **run)
    {
        RunManager *runs = window.runManager();
        auto runId = [runs, name] {
            for (const RunInfo &i : runs->history())
                if (i.name == name && i.state == RunState::Running)
                    return i.id;
            return QString();
        };
        QTRY_VERIFY_WITH_TIMEOUT(!runId().isEmpty(), 30000);
        const QString id = runId();
        SidePanel *side = window.sidePanel();
        QTRY_VERIFY_WITH_TIMEOUT(side->indexOfRun(id).isValid(), 10000);
        side->selectRun(id);
        RunView *view = window.runView();
        QTRY_VERIFY_WITH_TIMEOUT(view->run() && view->run()->runId() == id, 10000);
        QVERIFY(view->run()->isReadOnly());
        *run = view->run();
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_home.isValid());
        // The window's runs directory is the CLI's: both read XDG_DATA_HOME.
        qputenv("XDG_CONFIG_HOME", m_home.filePath(u"config"_s).toUtf8());
        qputenv("XDG_DATA_HOME", m_home.filePath(u"data"_s).toUtf8());
        QCoreApplication::setOrganizationName(u"rankdeck-test"_s);
        QCoreApplication::setApplicationName(u"tst_guifollow"_s);
        const QString bin = qEnvironmentVariable("RANKDECK_BIN_DIR");
        QVERIFY2(!bin.isEmpty(), "RANKDECK_BIN_DIR is not set (run through ctest)");
        m_cli = bin + u"/rankdeck-cli"_s;
        QVERIFY2(QFileInfo(m_cli).isExecutable(), qPrintable(m_cli));
    }

    void chosenCliRunFollows()
    {
        MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QProcess launcher;
        launcher.setProcessEnvironment(cliEnvironment());
        launcher.setProcessChannelMode(QProcess::MergedChannels);
        launcher.start(m_cli,
                       {u"launch"_s, u"--nproc-per-node"_s, u"2"_s, u"--name"_s, u"guifollow"_s,
                        u"--"_s, u"--steps"_s, u"100000"_s, u"--step-delay-ms"_s, u"50"_s});
        QVERIFY2(launcher.waitForStarted(30000), qPrintable(launcher.errorString()));
        auto cleanup = qScopeGuard([&] {
            if (launcher.state() != QProcess::NotRunning) {
                launcher.terminate();
                if (!launcher.waitForFinished(30000))
                    launcher.kill();
                launcher.waitForFinished(10000);
            }
        });
        RunController *run = nullptr;
        pickRunningRun(window, u"guifollow"_s, &run);
        QVERIFY(run);
        const QString id = run->runId();
        RunView *view = window.runView();
        QVERIFY(!isTerminal(run->state()));

        // The Logs page's "All ranks" takes in lines printed after the choice.
        view->setCurrentIndex(RunView::Logs);
        LogModel *logs = view->logsPage()->logModel();
        const int rowsAtChoice = logs->rowCount();
        QTRY_VERIFY_WITH_TIMEOUT(logs->rowCount() > rowsAtChoice + 10, 30000);
        // The rank table's steps move on.
        RankTableModel *table = view->rankModel();
        auto step = [table](int rank) {
            table->flush();
            return table->index(rank, RankTableModel::StepColumn)
                .data(RankTableModel::SortRole)
                .toLongLong();
        };
        const qint64 stepAtChoice = step(1);
        QTRY_VERIFY_WITH_TIMEOUT(step(1) > stepAtChoice + 5, 30000);

        const rankdeck::testing::CommandResult stop =
            rankdeck::testing::runCommand(m_cli, {u"stop"_s, id}, cliEnvironment(), 60000);
        QVERIFY2(stop.code == 0, qPrintable(stop.out + stop.err));
        QTRY_COMPARE_WITH_TIMEOUT(run->state(), RunState::Stopped, 30000);
        auto *state = view->overviewPage()->findChild<QLabel *>(u"runStateLabel"_s);
        QVERIFY(state);
        QTRY_VERIFY2(state->text().contains(runStateLabel(RunState::Stopped)),
                     qPrintable(state->text()));
        // Every line of the record in the page in the end (none elided at this size).
        QTRY_COMPARE_WITH_TIMEOUT(qint64(logs->lineRowCount()),
                                  run->logStore()->lineCount(LogStore::AllRanks), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(launcher.state(), QProcess::NotRunning, 30000);
    }

    // Issue 41: Dump stacks and Kill act on a run the CLI launched, through the request files
    // its launcher polls (as `rankdeck-cli stacks` and `stop`); Kill asks first.
    void followedRunActsFromItsButtons()
    {
        MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QProcess launcher;
        launcher.setProcessEnvironment(cliEnvironment());
        launcher.setProcessChannelMode(QProcess::MergedChannels);
        launcher.start(m_cli, {u"launch"_s, u"--nproc-per-node"_s, u"2"_s, u"--name"_s, u"guiact"_s,
                               u"--"_s, u"--steps"_s, u"100000"_s, u"--step-delay-ms"_s, u"50"_s});
        QVERIFY2(launcher.waitForStarted(30000), qPrintable(launcher.errorString()));
        auto cleanup = qScopeGuard([&] {
            if (launcher.state() != QProcess::NotRunning) {
                launcher.kill();
                launcher.waitForFinished(10000);
            }
        });
        RunController *run = nullptr;
        pickRunningRun(window, u"guiact"_s, &run);
        QVERIFY(run);
        RunView *view = window.runView();
        OverviewPage *overview = view->overviewPage();
        // Enabled once the view has seen the run's launcher alive (checked once a second).
        QTRY_VERIFY_WITH_TIMEOUT(overview->dumpStacksButton()->isEnabled(), 10000);
        QVERIFY(overview->stopButton()->isEnabled());
        QVERIFY(overview->killButton()->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(window.windowTitle().startsWith(u"guiact — running"_s), 10000);

        // Dump stacks: the launcher takes the request (and says so in its log).
        const QString dir = run->runDirectory();
        QTest::mouseClick(overview->dumpStacksButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(
            readFile(dir + u"/launcher.log"_s).contains("stack dump requested"), 30000);
        QVERIFY(!QFileInfo::exists(dir + u"/stacks-request"_s));

        // Kill: first a question; Cancel leaves the run alone, Yes kills it.
        auto answerKill = [](QMessageBox::StandardButton button) {
            QTimer::singleShot(0, [button] {
                for (QWidget *w : QApplication::topLevelWidgets())
                    if (auto *box = qobject_cast<QMessageBox *>(w); box && box->isVisible())
                        box->button(button)->click();
            });
        };
        answerKill(QMessageBox::Cancel);
        QTest::mouseClick(overview->killButton(), Qt::LeftButton);
        QVERIFY(!QFileInfo::exists(dir + u"/kill-request"_s));
        answerKill(QMessageBox::Yes);
        QTest::mouseClick(overview->killButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(isTerminal(run->state()), 30000);
        QTRY_COMPARE_WITH_TIMEOUT(launcher.state(), QProcess::NotRunning, 30000);
        QVERIFY(readFile(dir + u"/launcher.log"_s).contains("kill requested"));
        // The buttons follow the state: nothing to act on once the run ended.
        QTRY_VERIFY_WITH_TIMEOUT(!overview->killButton()->isEnabled(), 10000);
        QVERIFY(!overview->stopButton()->isEnabled());
    }

private:
    static QByteArray readFile(const QString &path)
    {
        QFile f(path);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }
};

QTEST_MAIN(TestGuiFollow)
#include "tst_guifollow.moc"
