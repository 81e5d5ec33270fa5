// SPDX-License-Identifier: GPL-3.0-or-later
//
// Issue 44's soak, short: a run that `rankdeck-cli launch` drives with rankdeck-loadgen ranks
// printing and stepping for two minutes, the app's window following it (bench/soakrun.h, the
// benchmark's own code). Every line the ranks wrote must be in the record, and neither the
// window's nor the launcher's resident memory may keep growing through the second half. The
// bounds are generous and nothing is timed: a loaded machine is only slower. The speed goals
// (stall, CLI latency) stay in the benchmark (bench/run --only soak).
#include "mainwindow.h"
#include "soakrun.h"

#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

using namespace rankdeck;
using namespace rankdeck::bench;
using namespace Qt::StringLiterals;

class TestSoak : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_home;
    QString m_bin;

private slots:
    void initTestCase()
    {
        QVERIFY(m_home.isValid());
        // The window's runs directory is the CLI's: both read XDG_DATA_HOME.
        qputenv("XDG_CONFIG_HOME", m_home.filePath(u"config"_s).toUtf8());
        qputenv("XDG_DATA_HOME", m_home.filePath(u"data"_s).toUtf8());
        QCoreApplication::setOrganizationName(u"rankdeck-test"_s);
        QCoreApplication::setApplicationName(u"tst_soak"_s);
        m_bin = qEnvironmentVariable("RANKDECK_BIN_DIR");
        QVERIFY2(!m_bin.isEmpty(), "RANKDECK_BIN_DIR is not set (run through ctest)");
        for (const QString &exe : {u"rankdeck-cli"_s, u"rankdeck-loadgen"_s})
            QVERIFY2(QFileInfo(m_bin + u'/' + exe).isExecutable(), qPrintable(m_bin + u'/' + exe));
    }

    void twoMinutesFollowed()
    {
        MainWindow window;
        window.resize(1200, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        SoakOptions options;
        options.ranks = 4;
        options.linesPerSecPerRank = 100;
        options.stepsPerSec = 5;
        options.seconds = 120;
        const SoakResult soak = runSoak(window, m_bin, options);
        QVERIFY2(soak.error.isEmpty(), qPrintable(soak.error));
        QVERIFY(soak.printed > 0);
        QCOMPARE(soak.missing, 0);
        QCOMPARE(soak.recorded, soak.printed);
        // Memory from the middle to the end: the first half holds the stores' windows filling
        // and the page's first draws, the second must not grow by tens of %.
        QVERIFY(soak.samples.size() > 60);
        const double gui = rssGrowthPct(soak.samples, 0.5, false);
        const double launcher = rssGrowthPct(soak.samples, 0.5, true);
        qInfo("RSS growth over the second half: window %.1f %%, launcher %.1f %% (%lld lines)", gui,
              launcher, soak.recorded);
        QVERIFY2(gui < 30.0, qPrintable(u"the window's RSS grew %1 %"_s.arg(gui, 0, 'f', 1)));
        QVERIFY2(launcher < 30.0,
                 qPrintable(u"the launcher's RSS grew %1 %"_s.arg(launcher, 0, 'f', 1)));
    }
};

QTEST_MAIN(TestSoak)
#include "tst_soak.moc"
