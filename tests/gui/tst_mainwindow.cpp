// SPDX-License-Identifier: GPL-3.0-or-later
//
// Smoke test: the main window builds offscreen with every page, the built-in profile first,
// and remembers its layout.
#include "accessiblenames.h"
#include "failurespage.h"
#include "logspage.h"
#include "losspage.h"
#include "lossplot.h"
#include "mainwindow.h"
#include "mnemonics.h"
#include "overviewpage.h"
#include "profilepage.h"
#include "record/runrecord.h"
#include "runview.h"
#include "sidepanel.h"

#include <QApplication>
#include <QJsonObject>
#include <QLineEdit>
#include <QListWidget>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

using namespace rankdeck;

class TestMainWindow : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase();
    void pagesExist();
    void localProfileFirst();
    void pageShortcutsSwitchTabs_data();
    void pageShortcutsSwitchTabs();
    void remembersCurrentPage();
    void mnemonicsUnique_data();
    void mnemonicsUnique();
    void runListFilterCommandDelete();
    void runMenuFollowsTheButtons();

private:
    QTemporaryDir m_home;
};

void TestMainWindow::initTestCase()
{
    QVERIFY(m_home.isValid());
    // Profiles, runs and settings of the test stay in a throw-away home.
    qputenv("XDG_CONFIG_HOME", m_home.filePath(QStringLiteral("config")).toUtf8());
    qputenv("XDG_DATA_HOME", m_home.filePath(QStringLiteral("data")).toUtf8());
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("rankdeck-test"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_mainwindow"));
}

void TestMainWindow::pagesExist()
{
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    RunView *view = window.runView();
    QVERIFY(view);
    QCOMPARE(view->count(), 5);
    QCOMPARE(view->widget(RunView::Overview), view->overviewPage());
    QCOMPARE(view->widget(RunView::Loss), view->lossPage());
    QCOMPARE(view->widget(RunView::Logs), view->logsPage());
    QCOMPARE(view->widget(RunView::Failures), view->failuresPage());
    QCOMPARE(view->widget(RunView::Profile), view->profilePage());
    QVERIFY(view->lossPage()->plot()->customPlot());
    QCOMPARE(view->logsPage()->rankTabCount(), 0);
    QCOMPARE(view->failuresPage()->entryCount(), 0);
    QVERIFY(!view->overviewPage()->isBannerVisible());
}

void TestMainWindow::localProfileFirst()
{
    MainWindow window;
    QListWidget *profiles = window.sidePanel()->profileList();
    QVERIFY(profiles->count() >= 1);
    QCOMPARE(profiles->item(0)->text(), QStringLiteral("local"));
}

void TestMainWindow::pageShortcutsSwitchTabs_data()
{
    QTest::addColumn<int>("key");
    QTest::addColumn<int>("page");
    QTest::newRow("Ctrl+1 overview") << int(Qt::Key_1) << int(RunView::Overview);
    QTest::newRow("Ctrl+2 loss") << int(Qt::Key_2) << int(RunView::Loss);
    QTest::newRow("Ctrl+3 logs") << int(Qt::Key_3) << int(RunView::Logs);
    QTest::newRow("Ctrl+4 failures") << int(Qt::Key_4) << int(RunView::Failures);
    QTest::newRow("Ctrl+5 profile") << int(Qt::Key_5) << int(RunView::Profile);
}

void TestMainWindow::pageShortcutsSwitchTabs()
{
    QFETCH(int, key);
    QFETCH(int, page);
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    const int other = page == RunView::Overview ? RunView::Failures : RunView::Overview;
    window.runView()->setCurrentIndex(other);
    QTest::keyClick(&window, Qt::Key(key), Qt::ControlModifier);
    QCOMPARE(window.runView()->currentIndex(), page);
}

void TestMainWindow::remembersCurrentPage()
{
    {
        MainWindow window;
        window.show();
        window.runView()->setCurrentIndex(RunView::Logs);
        window.close();
    }
    MainWindow again;
    QCOMPARE(again.runView()->currentIndex(), int(RunView::Logs));
    again.runView()->setCurrentIndex(RunView::Overview);
    again.close();
}

void TestMainWindow::mnemonicsUnique_data()
{
    QTest::addColumn<int>("page");
    QTest::newRow("overview") << int(RunView::Overview);
    QTest::newRow("loss") << int(RunView::Loss);
    QTest::newRow("logs") << int(RunView::Logs);
    QTest::newRow("failures") << int(RunView::Failures);
    QTest::newRow("profile") << int(RunView::Profile);
}

// Alt+letter reaches one control: the menus, the side panel, the tabs and the page shown.
void TestMainWindow::mnemonicsUnique()
{
    QFETCH(int, page);
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.runView()->setCurrentIndex(page);
    const QStringList clashes = testing::clashingMnemonics(&window);
    QVERIFY2(clashes.isEmpty(), qPrintable(clashes.join(u'\n')));
    // And every control a screen reader reaches on this page has a name.
    const QStringList nameless = testing::namelessControls(&window);
    QVERIFY2(nameless.isEmpty(), qPrintable(nameless.join(u'\n')));
}

// Runs of one name prefix found by the filter, the command that launches one again, and the
// record deleted (not while the run may still go on).
void TestMainWindow::runListFilterCommandDelete()
{
    const QString runs = RunRecord::defaultRunsDirectory();
    auto record = [&](const QString &name, const QString &lr, const QJsonObject &state) {
        TrainingConfig config;
        config.name = name;
        config.workerArguments = {QStringLiteral("--task"), QStringLiteral("mlp"),
                                  QStringLiteral("--lr"), lr};
        RunRecord r;
        QString error;
        const QString id = RunRecord::newRunId(name);
        if (!r.create(runs, id, name, Profile::builtinLocal(4), config, &error) ||
            !r.writeState(state, &error))
            qWarning("%s", qPrintable(error));
        return r.directory();
    };
    const QJsonObject finished{{QStringLiteral("state"), QStringLiteral("finished")}};
    const QString a = record(QStringLiteral("mlp-4-ranks-lr0.1"), QStringLiteral("0.1"), finished);
    const QString b =
        record(QStringLiteral("mlp-4-ranks-lr0.01"), QStringLiteral("0.01"), finished);
    // Running, and its launcher (this process) alive.
    const QString c = record(QStringLiteral("still-going"), QStringLiteral("0.1"),
                             {{QStringLiteral("state"), QStringLiteral("running")},
                              {QStringLiteral("launcher_pid"), QApplication::applicationPid()}});

    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    SidePanel *side = window.sidePanel();
    QAbstractItemModel *model = side->runList()->model();
    QTRY_COMPARE(model->rowCount(), 3);
    side->runFilter()->setText(QStringLiteral("LR0.01"));
    QCOMPARE(model->rowCount(), 1);
    QCOMPARE(model->index(0, 0).data().toString(), QStringLiteral("mlp-4-ranks-lr0.01"));
    side->runFilter()->clear();
    QCOMPARE(model->rowCount(), 3);

    QCOMPARE(SidePanel::relaunchCommand(a),
             QStringLiteral("rankdeck-cli launch --profile local --nproc-per-node 4 --name "
                            "mlp-4-ranks-lr0.1 -- --task mlp --lr 0.1"));

    QString error;
    QVERIFY2(window.deleteRun(QFileInfo(a).fileName(), false, &error), qPrintable(error));
    QVERIFY(!QFileInfo::exists(a));
    QTRY_COMPARE(model->rowCount(), 2);
    QVERIFY(!window.deleteRun(QFileInfo(c).fileName(), false, &error));
    QVERIFY2(error.contains(QStringLiteral("stop it before deleting it")), qPrintable(error));
    QVERIFY(QFileInfo::exists(c));
    QVERIFY(QFileInfo::exists(b));
}

// The Run menu is the Overview's buttons by another way: enabled with them, the same requests.
void TestMainWindow::runMenuFollowsTheButtons()
{
    MainWindow window;
    OverviewPage *overview = window.runView()->overviewPage();
    auto *stop = window.findChild<QAction *>(QStringLiteral("stopRunAction"));
    auto *kill = window.findChild<QAction *>(QStringLiteral("killRunAction"));
    auto *dump = window.findChild<QAction *>(QStringLiteral("dumpStacksAction"));
    QVERIFY(stop && kill && dump);
    for (QAction *a : {stop, kill, dump})
        QVERIFY2(!a->isEnabled(), qPrintable(a->text())); // no run shown
    overview->setRunActive(true);
    for (QAction *a : {stop, kill, dump})
        QVERIFY2(a->isEnabled(), qPrintable(a->text()));
    QSignalSpy stops(overview, &OverviewPage::stopRequested);
    QSignalSpy dumps(overview, &OverviewPage::dumpStacksRequested);
    stop->trigger();
    dump->trigger();
    QCOMPARE(stops.size(), 1);
    QCOMPARE(dumps.size(), 1);
    overview->setRunActive(false);
    QVERIFY(!kill->isEnabled());
}

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
