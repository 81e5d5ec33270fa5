// SPDX-License-Identifier: GPL-3.0-or-later
//
// Nodes whose sshd has no `Subsystem sftp` line, as many hardened servers: the worker (or the
// supervisor) is deployed and a --sync directory copied over exec channels instead, each file
// written under a temporary name, checked by its SHA-256 on the node and renamed into place.
// End to end through rankdeck-cli on two such sshd nodes: a training run with the real worker,
// a user's program with --sync, and a second --sync that sends only the changed file and
// removes the deleted one. The sshd logs prove SFTP was asked for and refused.
#include "config/profile.h"
#include "config/profilestore.h"
#include "fixtureprofile.h"
#include "sshfixture.h"

#include "testprocesses.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;
using rankdeck::testing::processesMatching;
using rankdeck::testing::writeFile;

class TestNoSftp : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void workerIsDeployedOverExec();
    void syncOverExec();

private:
    struct Launch
    {
        int exitCode = -1;
        QString output;
        QString runId;
    };
    Launch launch(const QStringList &options);
    QString copyOnNode(int node, const QString &name) const;

    SshFixture m_ssh;
    QTemporaryDir m_tmp;
    QString m_bin;
    QString m_cli;
    QString m_runsDir;
};

void TestNoSftp::initTestCase()
{
    if (const QString why = SshFixture::unavailableReason(); !why.isEmpty())
        QSKIP(qPrintable(why));
    m_bin = qEnvironmentVariable("RANKDECK_BIN_DIR");
    m_cli = m_bin + u"/rankdeck-cli"_s;
    QVERIFY(QFileInfo(m_cli).isExecutable());
    QVERIFY(m_tmp.isValid());
    QVERIFY(rankdeck::testing::isolateUserDirectories(m_tmp.path()));
    m_runsDir = m_tmp.filePath(u"XDG_DATA_HOME/rankdeck/runs"_s);
    SshFixture::Options o;
    o.sftp = false;
    m_ssh.setOptions(o);
    QVERIFY2(m_ssh.start(2), qPrintable(m_ssh.lastError()));
    Profile p = rankdeck::testing::fixtureProfile(m_ssh, u"nosftp"_s, 2, 1);
    p.backend = u"gloo"_s;
    p.connectTimeoutSec = 5;
    p.rendezvousTimeoutSec = 60;
    QString error;
    QVERIFY2(ProfileStore().save(p, true, &error), qPrintable(error));
}

TestNoSftp::Launch TestNoSftp::launch(const QStringList &options)
{
    const QStringList before = QDir(m_runsDir).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QProcess cli;
    cli.setProcessChannelMode(QProcess::MergedChannels);
    cli.setWorkingDirectory(m_tmp.path());
    cli.start(m_cli, QStringList{u"launch"_s, u"--profile"_s, u"nosftp"_s, u"--no-progress"_s,
                                 u"--accept-new-host-keys"_s} +
                         options);
    Launch l;
    if (!cli.waitForFinished(240000)) {
        cli.kill();
        cli.waitForFinished();
    }
    l.output = QString::fromUtf8(cli.readAll());
    l.exitCode = cli.exitStatus() == QProcess::NormalExit ? cli.exitCode() : -1;
    for (const QString &d : QDir(m_runsDir).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        if (!before.contains(d))
            l.runId = d;
    }
    qInfo("rankdeck-cli exit %d:\n%s", l.exitCode, qPrintable(l.output.right(4000)));
    return l;
}

QString TestNoSftp::copyOnNode(int node, const QString &name) const
{
    const QDir base(m_ssh.home(node) + u"/.cache/rankdeck/sync"_s);
    const QStringList copies = base.entryList({name + u"-*"_s}, QDir::Dirs | QDir::NoDotAndDotDot);
    return copies.size() == 1 ? base.filePath(copies.first()) : QString();
}

void TestNoSftp::workerIsDeployedOverExec()
{
    if (!QFileInfo(m_bin + u"/rankdeck-worker"_s).isExecutable())
        QSKIP("rankdeck-worker is not built (RANKDECK_BUILD_WORKER=OFF)");
    const Launch l = launch({u"--"_s, u"--task"_s, u"linear"_s, u"--steps"_s, u"10"_s});
    QVERIFY2(l.exitCode == 0, qPrintable(l.output));
    QVERIFY2(!l.output.contains(u"SFTP is not available"_s), qPrintable(l.output));
    QVERIFY2(l.output.contains(u"uploading the worker"_s), qPrintable(l.output));
    QFile local(m_bin + u"/rankdeck-worker"_s);
    QVERIFY(local.open(QIODevice::ReadOnly));
    QCryptographicHash hash(QCryptographicHash::Sha256);
    QVERIFY(hash.addData(&local));
    for (int node = 0; node < 2; ++node) {
        QVERIFY2(l.output.contains(u"[r%1] Rank %1: Epoch"_s.arg(node)), qPrintable(l.output));
        // The node refused SFTP, so the worker came over an exec channel: whole, executable,
        // and no temporary file left.
        QVERIFY2(m_ssh.log(node).contains("subsystem request for sftp"),
                 m_ssh.log(node).right(2000).constData());
        const QDir dir(m_ssh.home(node) + u"/.cache/rankdeck/worker"_s);
        const QStringList workers = dir.entryList({u"rankdeck-worker-*"_s}, QDir::Files);
        QCOMPARE(workers.size(), 1);
        QFile deployed(dir.filePath(workers.first()));
        QVERIFY(deployed.open(QIODevice::ReadOnly));
        QCryptographicHash there(QCryptographicHash::Sha256);
        QVERIFY(there.addData(&deployed));
        QCOMPARE(there.result().toHex(), hash.result().toHex());
        QVERIFY(QFileInfo(deployed).isExecutable());
        QVERIFY(dir.entryList({u"*rankdeck-part*"_s}, QDir::Files | QDir::Hidden).isEmpty());
    }
    QTRY_VERIFY_WITH_TIMEOUT(processesMatching(l.runId).isEmpty(), 15000);
}

void TestNoSftp::syncOverExec()
{
    const QString proj = m_tmp.filePath(u"proj"_s);
    QVERIFY(writeFile(proj + u"/train.py"_s,
                      "import os\nhere = os.path.dirname(os.path.abspath(__file__))\n"
                      "value = open(os.path.join(here, 'data', 'value.txt')).read().strip()\n"
                      "print('rank %s value=%s' % (os.environ['RANK'], value), flush=True)\n"));
    QVERIFY(writeFile(proj + u"/data/value.txt"_s, "42\n"));
    QVERIFY(writeFile(proj + u"/run.sh"_s, "#!/bin/sh\nexec python3 train.py\n", true));
    QVERIFY(writeFile(proj + u"/gone.txt"_s, "removed before the second launch\n"));
    QVERIFY(writeFile(proj + u"/big.bin"_s, QByteArray(3 * 1024 * 1024 + 17, 'b')));
    Launch l = launch({u"--exec"_s, u"--sync"_s, proj, u"--"_s, u"./run.sh"_s});
    QVERIFY2(l.exitCode == 0, qPrintable(l.output));
    for (int node = 0; node < 2; ++node) {
        QVERIFY2(l.output.contains(u"[r%1] rank %1 value=42"_s.arg(node)), qPrintable(l.output));
        QVERIFY2(l.output.contains(u"sync: %1: 5 files"_s.arg(m_ssh.address(node))),
                 qPrintable(l.output));
        const QString copy = copyOnNode(node, u"proj"_s);
        QVERIFY(!copy.isEmpty());
        QVERIFY(QFileInfo(copy + u"/run.sh"_s).isExecutable());
        QVERIFY(!QFileInfo(copy + u"/train.py"_s).isExecutable());
        QCOMPARE(QFileInfo(copy + u"/big.bin"_s).size(), qint64(3 * 1024 * 1024 + 17));
        QVERIFY(QFileInfo::exists(copy + u".manifest.json"_s));
    }
    // One file changed, one gone: the next sync sends that one file and removes the other.
    QVERIFY(writeFile(proj + u"/data/value.txt"_s, "1234\n"));
    QVERIFY(QFile::remove(proj + u"/gone.txt"_s));
    l = launch({u"--exec"_s, u"--sync"_s, proj, u"--"_s, u"./run.sh"_s});
    QVERIFY2(l.exitCode == 0, qPrintable(l.output));
    for (int node = 0; node < 2; ++node) {
        QVERIFY2(l.output.contains(u"[r%1] rank %1 value=1234"_s.arg(node)), qPrintable(l.output));
        QVERIFY2(l.output.contains(u"sync: %1: 1 file, 5 bytes (3 unchanged, 1 removed)"_s.arg(
                     m_ssh.address(node))),
                 qPrintable(l.output));
        const QString copy = copyOnNode(node, u"proj"_s);
        QVERIFY(!QFileInfo::exists(copy + u"/gone.txt"_s));
        QVERIFY(QDir(copy).entryList({u"*rankdeck-part*"_s}, QDir::Files | QDir::Hidden).isEmpty());
    }
    QTRY_VERIFY_WITH_TIMEOUT(processesMatching(l.runId).isEmpty(), 15000);
}

QTEST_GUILESS_MAIN(TestNoSftp)
#include "tst_nosftp.moc"
