// SPDX-License-Identifier: GPL-3.0-or-later
// RANKDECK_COUNT_STEPS under valgrind's callgrind (worker/instructioncount.h): only the window's
// steps are counted, in proportion to their number, and libtorch's start-up not at all.
// bench/run.py's telemetry benchmark rests on both.
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QtTest>

using namespace Qt::StringLiterals;

namespace {

QString workerPath()
{
    return qEnvironmentVariable("RANKDECK_BIN_DIR") + QStringLiteral("/rankdeck-worker");
}

// Starts the worker under callgrind with instrumentation off until the window opens.
void startCounted(QProcess &p, const QString &window, int steps)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(u"RANK"_s, u"0"_s);
    env.insert(u"WORLD_SIZE"_s, u"1"_s);
    env.insert(u"MASTER_ADDR"_s, u"127.0.0.1"_s);
    env.insert(u"MASTER_PORT"_s, u"0"_s);
    env.insert(u"OMP_NUM_THREADS"_s, u"1"_s);
    env.insert(u"RANKDECK_COUNT_STEPS"_s, window);
    p.setProcessEnvironment(env);
    p.setStandardOutputFile(QProcess::nullDevice());
    p.start(u"valgrind"_s,
            {u"--tool=callgrind"_s, u"--instr-atstart=no"_s, u"--callgrind-out-file=/dev/null"_s,
             workerPath(), u"--task"_s, u"linear"_s, u"--steps"_s, QString::number(steps),
             u"--telemetry"_s, u"off"_s, u"--log-every"_s, u"100"_s});
}

// callgrind's "Collected : N" on stderr; -1 when the run failed. About 20 s of CPU each on an idle
// machine (valgrind runs libtorch's start-up uninstrumented, still ~20x slower than natively);
// minutes when the cores are shared.
qint64 collected(QProcess &p)
{
    if (!p.waitForFinished(860000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        return -1;
    const auto m = QRegularExpression(u"Collected : (\\d+)"_s)
                       .match(QString::fromUtf8(p.readAllStandardError()));
    return m.hasMatch() ? m.captured(1).toLongLong() : -1;
}

} // namespace

class TestInstructionCount : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        if (!QFileInfo(workerPath()).isExecutable())
            QSKIP("rankdeck-worker was not built (RANKDECK_BUILD_WORKER=OFF)");
        if (QStandardPaths::findExecutable(u"valgrind"_s).isEmpty())
            QSKIP("valgrind is not installed (scripts/bootstrap.sh installs it)");
    }

    void countsOnlyTheWindow()
    {
        // Same run length, windows of 5 and 10 steps, side by side. Were start-up or the steps
        // outside the window counted, both would hold the same ~10^9 instructions.
        QProcess five, ten;
        startCounted(five, u"2:7"_s, 12);
        startCounted(ten, u"2:12"_s, 12);
        const qint64 a = collected(five), b = collected(ten);
        QVERIFY2(a > 0 && b > 0, qPrintable(u"counts %1 and %2"_s.arg(a).arg(b)));
        const double ratio = double(b) / double(a);
        QVERIFY2(
            ratio > 1.8 && ratio < 2.2,
            qPrintable(u"10 steps counted %1, 5 steps %2 (ratio %3)"_s.arg(b).arg(a).arg(ratio)));
    }
};

QTEST_GUILESS_MAIN(TestInstructionCount)
#include "tst_instructioncount.moc"
