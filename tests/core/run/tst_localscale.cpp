// SPDX-License-Identifier: GPL-3.0-or-later
//
// Issue 31's "512 ranks for real", at 256 ranks for CI time: rankdeck-loadgen ranks through the
// real local transport, line splitter, parser, stores and run controller. A run that ends by
// itself records every line every rank printed; a run stopped mid-way ends every process of
// every rank (no orphan in any rank's process group) and keeps every line already printed.
// Under too low an open-file limit the launcher refuses with what to do. No timing is asserted: the
// timeouts are generous so that a loaded CI machine passes.
#include "loadgenlog.h"
#include "run/runcontroller.h"
#include "store/logstore.h"

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <cerrno>
#include <csignal>
#include <memory>
#include <sys/resource.h>
#include <unistd.h>

using namespace rankdeck;

namespace {

constexpr int Ranks = 256;

QString loadgenPath()
{
    return qEnvironmentVariable("RANKDECK_BIN_DIR") + QStringLiteral("/rankdeck-loadgen");
}

// Processes left in the process group each rank led (a rank runs in its own session).
QList<qint64> survivingGroups(const QList<qint64> &groups)
{
    QList<qint64> alive;
    for (qint64 g : groups) {
        if (g > 0 && (::kill(-pid_t(g), 0) == 0 || errno != ESRCH))
            alive.append(g);
    }
    return alive;
}

// A local run of Ranks loadgen ranks in runsDirectory, each printing 20 lines and 2 steps a
// second for durationSec.
std::unique_ptr<RunController> loadgenRun(const QString &runsDirectory, const QString &name,
                                          int durationSec)
{
    TrainingConfig config;
    config.name = name;
    config.workerArguments = {QStringLiteral("--lines-per-sec"), QStringLiteral("20"),
                              QStringLiteral("--steps-per-sec"), QStringLiteral("2"),
                              QStringLiteral("--duration"),      QString::number(durationSec)};
    RunController::Options options;
    options.workerPath = loadgenPath();
    options.runsDirectory = runsDirectory;
    options.hangTimeoutSec = 3600;
    return std::make_unique<RunController>(Profile::builtinLocal(Ranks), config, options);
}

} // namespace

class TestLocalScale : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase();
    void runToTheEnd();
    void stopMidRun();
    void tooFewOpenFilesSaysSo();

private:
    bool completeRecord(RunController &run, qint64 *lines);
};

void TestLocalScale::initTestCase()
{
    QVERIFY2(QFileInfo(loadgenPath()).isExecutable(),
             qPrintable(QStringLiteral("no rankdeck-loadgen at %1").arg(loadgenPath())));
    // Each local rank holds 7 descriptors in the launcher; RunController raises the soft limit
    // towards the hard one when it must, and says so when the hard limit is too low.
    rlimit limit{};
    QCOMPARE(::getrlimit(RLIMIT_NOFILE, &limit), 0);
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < rlim_t(Ranks * 7 + 256))
        QSKIP("the hard open-file limit is below what 256 local ranks need");
}

bool TestLocalScale::completeRecord(RunController &run, qint64 *total)
{
    *total = 0;
    for (int r = 0; r < Ranks; ++r) {
        qint64 lines = 0;
        QString problem;
        if (!rankLogComplete(run.logStore()->logFilePath(r), r, &lines, &problem)) {
            qWarning("%s", qPrintable(problem));
            return false;
        }
        *total += lines;
    }
    return true;
}

void TestLocalScale::runToTheEnd()
{
    QTemporaryDir runs;
    QVERIFY(runs.isValid());
    const auto runOwner = loadgenRun(runs.path(), QStringLiteral("scale256"), 3);
    RunController &run = *runOwner;
    QSignalSpy finished(&run, &RunController::finished);
    QString error;
    QVERIFY2(run.start(&error), qPrintable(error));
    QVERIFY2(finished.wait(240000), "the 256-rank run did not end within 240 s");
    QVERIFY2(run.state() == RunState::Finished,
             qPrintable(
                 QStringLiteral("run ended as %1: %2 %3")
                     .arg(runStateLabel(run.state()), run.rootCauseSummary(), run.errorMessage())));
    QCOMPARE(run.worldSize(), Ranks);
    qint64 lines = 0;
    QVERIFY(completeRecord(run, &lines));
    // 3 s at 20 lines/s: a loaded machine may print fewer, but every rank prints some.
    QVERIFY2(lines >= Ranks, qPrintable(QString::number(lines)));
    qInfo("%lld lines from %d ranks, all in the record", qlonglong(lines), Ranks);
}

void TestLocalScale::stopMidRun()
{
    QTemporaryDir runs;
    QVERIFY(runs.isValid());
    const auto runOwner = loadgenRun(runs.path(), QStringLiteral("scale256stop"), 3600);
    RunController &run = *runOwner;
    QSignalSpy finished(&run, &RunController::finished);
    QString error;
    QVERIFY2(run.start(&error), qPrintable(error));
    // Every rank started and printed something before the stop.
    QTRY_VERIFY_WITH_TIMEOUT(run.state() == RunState::Running, 240000);
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            for (int r = 0; r < Ranks; ++r) {
                if (run.logStore()->lineCount(r) == 0)
                    return false;
            }
            return true;
        }(),
        120000);
    QList<qint64> groups;
    for (int r = 0; r < Ranks; ++r)
        groups.append(run.rankStatus(r).pid);
    QCOMPARE(survivingGroups(groups).size(), Ranks);

    run.stop();
    QVERIFY2(finished.wait(240000), "the stopped 256-rank run did not end within 240 s");
    QCOMPARE(run.state(), RunState::Stopped);
    // No process of any rank's group is left (the transport kills what a rank leaves).
    QTRY_VERIFY_WITH_TIMEOUT(survivingGroups(groups).isEmpty(), 30000);
    // Every line a rank printed before it stopped is in the record, in order, without a gap.
    qint64 lines = 0;
    QVERIFY(completeRecord(run, &lines));
    qInfo("stopped: %lld lines from %d ranks, all in the record", qlonglong(lines), Ranks);
}

void TestLocalScale::tooFewOpenFilesSaysSo()
{
    // 512 ranks under a hard limit of 1,024 open files: the launcher refuses with what to do,
    // instead of QProcess's "Too many open files" for the ranks past the limit.
    rlimit limit{};
    QCOMPARE(::getrlimit(RLIMIT_NOFILE, &limit), 0);
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < 1024)
        QSKIP("the hard open-file limit is already below 1,024");
    const QString cli = qEnvironmentVariable("RANKDECK_BIN_DIR") + QStringLiteral("/rankdeck-cli");
    QVERIFY(QFileInfo(cli).isExecutable());
    QTemporaryDir home;
    QVERIFY(home.isValid());
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("XDG_DATA_HOME"), home.filePath(QStringLiteral("data")));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), home.filePath(QStringLiteral("config")));
    env.insert(QStringLiteral("XDG_CACHE_HOME"), home.filePath(QStringLiteral("cache")));
    QProcess p;
    p.setProcessEnvironment(env);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(QStringLiteral("/bin/sh"),
            {QStringLiteral("-c"),
             QStringLiteral("ulimit -S -n 1024 && ulimit -H -n 1024 && exec \"$0\" launch "
                            "--profile local --nproc-per-node 512 --worker \"$1\" --quiet "
                            "--no-progress -- --duration 1"),
             cli, loadgenPath()});
    QVERIFY(p.waitForFinished(120000));
    const QString out = QString::fromUtf8(p.readAll());
    QCOMPARE(p.exitCode(), 1);
    QVERIFY2(out.contains(QStringLiteral("open files in the launcher")) &&
                 out.contains(QStringLiteral("ulimit -Hn")),
             qPrintable(out));
    QVERIFY2(!out.contains(QStringLiteral("Too many open files")), qPrintable(out));
}

QTEST_GUILESS_MAIN(TestLocalScale)
#include "tst_localscale.moc"
