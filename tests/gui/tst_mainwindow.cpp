// SPDX-License-Identifier: GPL-3.0-or-later
//
// Smoke test: the main window builds offscreen with every page, the built-in profile first,
// and remembers its layout.
#include "failurespage.h"
#include "logspage.h"
#include "losspage.h"
#include "lossplot.h"
#include "mainwindow.h"
#include "overviewpage.h"
#include "runview.h"
#include "sidepanel.h"

#include <QListWidget>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
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
    QCOMPARE(view->count(), 4);
    QCOMPARE(view->widget(RunView::Overview), view->overviewPage());
    QCOMPARE(view->widget(RunView::Loss), view->lossPage());
    QCOMPARE(view->widget(RunView::Logs), view->logsPage());
    QCOMPARE(view->widget(RunView::Failures), view->failuresPage());
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

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
