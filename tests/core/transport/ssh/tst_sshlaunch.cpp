// SPDX-License-Identifier: GPL-3.0-or-later
//
// End to end through SSH: `rankdeck-cli launch` with an ssh profile of two sshd nodes × two ranks
// runs real Gloo training with the real worker. Every line each rank wrote on its node must be
// in the local run record; a second launch does not upload the worker again; a crashing rank
// fails the run and leaves no process of it on any node.
#include "config/profile.h"
#include "config/profilestore.h"
#include "fixtureprofile.h"
#include "sshfixture.h"

#include "testprocesses.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;
using rankdeck::testing::fileLines;
using rankdeck::testing::processesMatching;

namespace {} // namespace

class TestSshLaunch : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void trainingRunsThroughSshAndLosesNoLine();
    void secondLaunchReusesTheWorkerAndACrashLeavesNothing();
    void usersProgramOnTwoNodes();

private:
    struct Launch
    {
        int exitCode = -1;
        QString output;
        QString runId;
    };
    Launch launch(const QStringList &extra, const QStringList &workerArgs);
    QString nodeRunDir(int node, const QString &runId) const
    {
        return rankdeck::testing::nodeRunDirectory(m_ssh, node, runId);
    }

    SshFixture m_ssh;
    QTemporaryDir m_tmp;
    QString m_cli;
    QString m_runsDir;
    QString m_workerPath[2];
    QDateTime m_workerTime[2];
};

void TestSshLaunch::initTestCase()
{
    if (const QString why = SshFixture::unavailableReason(); !why.isEmpty())
        QSKIP(qPrintable(why));
    const QString bin = qEnvironmentVariable("RANKDECK_BIN_DIR");
    m_cli = bin + QStringLiteral("/rankdeck-cli");
    if (!QFileInfo(bin + QStringLiteral("/rankdeck-worker")).isExecutable())
        QSKIP("rankdeck-worker is not built (RANKDECK_BUILD_WORKER=OFF)");
    QVERIFY(QFileInfo(m_cli).isExecutable());
    QVERIFY(m_tmp.isValid());
    QVERIFY(rankdeck::testing::isolateUserDirectories(m_tmp.path()));
    m_runsDir = m_tmp.filePath(QStringLiteral("XDG_DATA_HOME/rankdeck/runs"));
    QVERIFY2(m_ssh.start(2), qPrintable(m_ssh.lastError()));

    Profile p = rankdeck::testing::fixtureProfile(m_ssh, QStringLiteral("sshpair"), 2, 2);
    p.backend = QStringLiteral("gloo");
    p.connectTimeoutSec = 5;
    p.rendezvousTimeoutSec = 60;
    p.heartbeatTimeoutSec = 30;
    QString error;
    QVERIFY2(ProfileStore().save(p, true, &error), qPrintable(error));
}

TestSshLaunch::Launch TestSshLaunch::launch(const QStringList &extra, const QStringList &workerArgs)
{
    const QStringList before = QDir(m_runsDir).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QProcess cli;
    cli.setProcessChannelMode(QProcess::MergedChannels);
    cli.start(m_cli, QStringList{QStringLiteral("launch"), QStringLiteral("--profile"),
                                 QStringLiteral("sshpair"), QStringLiteral("--no-progress")} +
                         extra + QStringList{QStringLiteral("--")} + workerArgs);
    Launch l;
    if (!cli.waitForFinished(240000)) {
        cli.kill();
        cli.waitForFinished();
    }
    l.output = QString::fromUtf8(cli.readAll());
    l.exitCode = cli.exitStatus() == QProcess::NormalExit ? cli.exitCode() : -1;
    const QStringList after = QDir(m_runsDir).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &d : after) {
        if (!before.contains(d))
            l.runId = d;
    }
    // The launcher's own account (notes, summary) for the test log; rank lines are left out.
    QStringList notes = l.output.split(u'\n');
    notes.removeIf([](const QString &line) { return line.startsWith(u'['); });
    qInfo("rankdeck-cli exit %d:\n%s", l.exitCode, qPrintable(notes.join(u'\n')));
    return l;
}

void TestSshLaunch::trainingRunsThroughSshAndLosesNoLine()
{
    // No known_hosts yet: the CLI's accept-new policy must add both nodes in OpenSSH's format.
    const int steps = 30;
    const Launch l =
        launch({QStringLiteral("--accept-new-host-keys")},
               {QStringLiteral("--task"), QStringLiteral("linear"), QStringLiteral("--steps"),
                QString::number(steps), QStringLiteral("--backend"), QStringLiteral("gloo")});
    QVERIFY2(l.exitCode == 0, qPrintable(l.output));
    QVERIFY2(!l.runId.isEmpty(), qPrintable(l.output));
    QVERIFY2(l.output.contains(QStringLiteral("uploading the worker")), qPrintable(l.output));

    const QString knownHosts = m_tmp.filePath(QStringLiteral("HOME/.ssh/known_hosts"));
    for (int node = 0; node < 2; ++node) {
        QProcess keygen;
        keygen.start(QStringLiteral("ssh-keygen"),
                     {QStringLiteral("-F"),
                      QStringLiteral("[%1]:%2").arg(m_ssh.address(node)).arg(m_ssh.port(node)),
                      QStringLiteral("-f"), knownHosts});
        QVERIFY(keygen.waitForFinished(10000));
        QCOMPARE(keygen.exitCode(), 0);
    }

    const QString local = m_runsDir + QLatin1Char('/') + l.runId;
    for (int rank = 0; rank < 4; ++rank) {
        const QString remote =
            nodeRunDir(rank / 2, l.runId) + QStringLiteral("/rank%1.a1").arg(rank);
        QList<QByteArray> printed =
            fileLines(remote + QStringLiteral(".out")) + fileLines(remote + QStringLiteral(".err"));
        QVERIFY2(!printed.isEmpty(), qPrintable(remote));
        QList<QByteArray> text;
        int events = 0;
        for (const QByteArray &line : std::as_const(printed)) {
            if (line.contains("\x1erdk1 "))
                ++events;
            else
                text.append(line);
        }
        const int epochLines =
            int(std::count_if(text.cbegin(), text.cend(), [rank](const QByteArray &t) {
                return t.startsWith(QStringLiteral("Rank %1: Epoch").arg(rank).toUtf8());
            }));
        QCOMPARE(epochLines, steps);
        // Same lines locally (their interleaving of stdout and stderr is arrival order there).
        QList<QByteArray> recorded = fileLines(local + QStringLiteral("/rank-%1.log").arg(rank));
        std::sort(text.begin(), text.end());
        std::sort(recorded.begin(), recorded.end());
        QCOMPARE(recorded, text);
        QCOMPARE(int(fileLines(local + QStringLiteral("/rank-%1.events.jsonl").arg(rank)).size()),
                 events);
    }
    QTRY_VERIFY_WITH_TIMEOUT(processesMatching(l.runId).isEmpty(), 15000);

    for (int node = 0; node < 2; ++node) {
        const QStringList workers =
            QDir(m_ssh.home(node) + QStringLiteral("/.cache/rankdeck/worker"))
                .entryList({QStringLiteral("rankdeck-worker-*")}, QDir::Files);
        QCOMPARE(workers.size(), 1);
        m_workerPath[node] =
            m_ssh.home(node) + QStringLiteral("/.cache/rankdeck/worker/") + workers.first();
        m_workerTime[node] = QFileInfo(m_workerPath[node]).lastModified();
    }
}

void TestSshLaunch::secondLaunchReusesTheWorkerAndACrashLeavesNothing()
{
    if (m_workerPath[0].isEmpty())
        QSKIP("needs the first launch");
    const Launch l = launch(
        {}, {QStringLiteral("--task"), QStringLiteral("linear"), QStringLiteral("--steps"),
             QStringLiteral("200"), QStringLiteral("--backend"), QStringLiteral("gloo"),
             QStringLiteral("--step-delay-ms"), QStringLiteral("20"), QStringLiteral("--fault"),
             QStringLiteral("segv@5"), QStringLiteral("--fault-rank"), QStringLiteral("3")});
    QVERIFY2(l.exitCode == 1, qPrintable(l.output));
    QVERIFY2(!l.runId.isEmpty(), qPrintable(l.output));
    QVERIFY2(!l.output.contains(QStringLiteral("uploading the worker")), qPrintable(l.output));
    QVERIFY2(l.output.contains(QStringLiteral("SIGSEGV")), qPrintable(l.output));
    for (int node = 0; node < 2; ++node)
        QCOMPARE(QFileInfo(m_workerPath[node]).lastModified(), m_workerTime[node]);
    QTRY_VERIFY_WITH_TIMEOUT(processesMatching(l.runId).isEmpty(), 20000);
}

// launch --exec on two sshd nodes × two ranks: the supervisor is deployed like the worker, the
// unmodified reference DDP script (torch venv's Python) runs on every rank with rank 0's port,
// and each rank gets one loss point per printed epoch in the local record.
void TestSshLaunch::usersProgramOnTwoNodes()
{
    const QString python = qEnvironmentVariable("RANKDECK_TORCH_PYTHON");
    if (python.isEmpty())
        QSKIP("no torch Python (RANKDECK_TORCH_PYTHON)");
    const QString script = qEnvironmentVariable("RANKDECK_SOURCE_DIR") +
                           QStringLiteral("/tests/cli/programs/train_ddp.py");
    const Launch l = launch({QStringLiteral("--exec")}, {python, script});
    // torch may abort a rank at exit after its last line (see tst_programlaunch): that rank is
    // then the root cause; the records must be complete all the same.
    QVERIFY2(l.exitCode == 0 ||
                 l.output.contains(QStringLiteral("terminate called without an active exception")),
             qPrintable(l.output));
    QVERIFY2(!l.runId.isEmpty(), qPrintable(l.output));
    const QString local = m_runsDir + QLatin1Char('/') + l.runId;
    const QList<QByteArray> csv = fileLines(local + QStringLiteral("/metrics.csv"));
    for (int rank = 0; rank < 4; ++rank) {
        const QList<QByteArray> recorded =
            fileLines(local + QStringLiteral("/rank-%1.log").arg(rank));
        int epochs = 0;
        for (const QByteArray &line : recorded) {
            if (line.startsWith(QStringLiteral("Rank %1: Epoch").arg(rank).toUtf8()))
                ++epochs;
        }
        QCOMPARE(epochs, 5);
        const QByteArray prefix = QByteArray::number(rank) + ",loss,0,";
        QCOMPARE(int(std::count_if(csv.cbegin(), csv.cend(),
                                   [&](const QByteArray &row) { return row.startsWith(prefix); })),
                 5);
    }
    QTRY_VERIFY_WITH_TIMEOUT(processesMatching(l.runId).isEmpty(), 15000);
}

QTEST_GUILESS_MAIN(TestSshLaunch)
#include "tst_sshlaunch.moc"
