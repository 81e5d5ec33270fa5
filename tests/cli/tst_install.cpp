// SPDX-License-Identifier: GPL-3.0-or-later
//
// The installed tree works on its own (issue 30): `cmake --install` into a temporary prefix, the
// tree moved elsewhere, and the build tree hidden (a private mount namespace with an empty tmpfs
// over the whole build directory, so that nothing run from the moved tree can reach back into
// it, whatever path it tries). From the moved tree: --version, the built-in worker on 2 local
// ranks, a user's program (--exec) and the built-in worker on an sshd node (skipped without
// sshd). The layout and the RUNPATHs of the installed binaries are checked too.
#include "config/profilestore.h"
#include "fixtureprofile.h"
#include "sshfixture.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;

static const QString kVersion = QStringLiteral(RANKDECK_PROJECT_VERSION);
using namespace rankdeck;

class TestInstall : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void layout_data();
    void layout();
    void noBuildTreeRunpath_data();
    void noBuildTreeRunpath();
    void launchFromMovedTree_data();
    void launchFromMovedTree();

private:
    struct Result
    {
        int code = -1;
        QString output;
    };
    static Result run(const QString &program, const QStringList &args, int timeoutMs = 180000);
    // rankdeck-cli of the moved tree with the build directory hidden under an empty tmpfs.
    Result hiddenBuild(const QStringList &cliArgs) const;

    QTemporaryDir m_tmp;
    QString m_tree; // the moved install tree
    QString m_hideWhy;
    SshFixture m_ssh;
    QString m_sshWhy;
};

TestInstall::Result TestInstall::run(const QString &program, const QStringList &args, int timeoutMs)
{
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, args);
    Result r;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
    }
    r.output = QString::fromUtf8(p.readAll());
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    return r;
}

TestInstall::Result TestInstall::hiddenBuild(const QStringList &cliArgs) const
{
    // $0 is the build directory; the mount is private to this process and its children.
    return run(u"unshare"_s,
               QStringList{u"--mount"_s, u"--propagation"_s, u"private"_s, u"sh"_s, u"-c"_s,
                           u"mount -t tmpfs -o size=1m rankdeck-hidden \"$0\" && "
                           "test ! -e \"$0/bin\" && exec \"$@\""_s,
                           QStringLiteral(RANKDECK_BUILD_DIR), m_tree + u"/bin/rankdeck-cli"_s} +
                   cliArgs);
}

void TestInstall::initTestCase()
{
    QVERIFY(m_tmp.isValid());
    const QString prefix = m_tmp.filePath(u"prefix"_s);
    const Result install =
        run(QStringLiteral(RANKDECK_CMAKE_COMMAND),
            {u"--install"_s, QStringLiteral(RANKDECK_BUILD_DIR), u"--prefix"_s, prefix});
    QVERIFY2(install.code == 0, qPrintable(install.output));
    m_tree = m_tmp.filePath(u"elsewhere/moved"_s);
    QVERIFY(QDir().mkpath(m_tmp.filePath(u"elsewhere"_s)));
    QVERIFY(QDir().rename(prefix, m_tree));
    QVERIFY(!QFileInfo::exists(prefix));

    // Nothing may come from the environment either.
    for (const char *var : {"RANKDECK_WORKER", "RANKDECK_SUPERVISOR", "RANKDECK_BIN_DIR"})
        qunsetenv(var);
    QVERIFY(testing::isolateUserDirectories(m_tmp.path()));
    const Result probe =
        run(u"unshare"_s, {u"--mount"_s, u"--propagation"_s, u"private"_s, u"mount"_s, u"-t"_s,
                           u"tmpfs"_s, u"probe"_s, m_tmp.path()});
    if (probe.code != 0)
        m_hideWhy = u"cannot hide the build tree (unshare --mount and mount need root): "_s +
                    probe.output.trimmed();

    m_sshWhy = SshFixture::unavailableReason();
    if (m_sshWhy.isEmpty() && !m_ssh.start(1))
        m_sshWhy = u"sshd fixture: "_s + m_ssh.lastError();
    if (m_sshWhy.isEmpty()) {
        Profile p = testing::fixtureProfile(m_ssh, u"sshnode"_s, 1, 2);
        p.connectTimeoutSec = 10;
        p.rendezvousTimeoutSec = 60;
        QString error;
        QVERIFY2(ProfileStore().save(p, true, &error), qPrintable(error));
    }
}

void TestInstall::layout_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("executable");
    QTest::newRow("GUI") << u"bin/rankdeck"_s << true;
    QTest::newRow("CLI") << u"bin/rankdeck-cli"_s << true;
    QTest::newRow("worker") << u"libexec/rankdeck/rankdeck-worker"_s << true;
    QTest::newRow("supervisor") << u"libexec/rankdeck/rankdeck-supervisor"_s << true;
    QTest::newRow("desktop file") << u"share/applications/rankdeck.desktop"_s << false;
    QTest::newRow("icon") << u"share/icons/hicolor/scalable/apps/rankdeck.svg"_s << false;
    QTest::newRow("metainfo") << u"share/metainfo/io.github.rankdeck.RankDeck.metainfo.xml"_s
                              << false;
    QTest::newRow("rankdeck-cli(1)") << u"share/man/man1/rankdeck-cli.1.gz"_s << false;
    QTest::newRow("rankdeck(1)") << u"share/man/man1/rankdeck.1.gz"_s << false;
    QTest::newRow("bash completion")
        << u"share/bash-completion/completions/rankdeck-cli"_s << false;
    QTest::newRow("licence") << u"share/doc/rankdeck/LICENSE"_s << false;
}

void TestInstall::layout()
{
    QFETCH(QString, path);
    QFETCH(bool, executable);
    const QFileInfo f(m_tree + u'/' + path);
    QVERIFY2(f.isFile(), qPrintable(f.filePath()));
    QCOMPARE(f.isExecutable(), executable);
    QVERIFY2(!QFileInfo::exists(m_tree + u"/bin/rankdeck-worker"_s), "the worker is not a user's "
                                                                     "command");
}

void TestInstall::noBuildTreeRunpath_data()
{
    QTest::addColumn<QString>("binary");
    QTest::newRow("rankdeck") << u"bin/rankdeck"_s;
    QTest::newRow("rankdeck-cli") << u"bin/rankdeck-cli"_s;
    QTest::newRow("worker") << u"libexec/rankdeck/rankdeck-worker"_s;
    QTest::newRow("supervisor") << u"libexec/rankdeck/rankdeck-supervisor"_s;
}

void TestInstall::noBuildTreeRunpath()
{
    QFETCH(QString, binary);
    const Result r = run(u"readelf"_s, {u"-d"_s, m_tree + u'/' + binary});
    QVERIFY2(r.code == 0, qPrintable(r.output));
    QVERIFY2(!r.output.contains(QStringLiteral(RANKDECK_BUILD_DIR)), qPrintable(r.output));
}

void TestInstall::launchFromMovedTree_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QStringList>("expected"); // lines in the output
    QTest::newRow("--version") << QStringList{u"--version"_s}
                               << QStringList{u"rankdeck-cli "_s + kVersion};
    QTest::newRow("built-in worker, 2 local ranks")
        << QStringList{u"launch"_s, u"--profile"_s,     u"local"_s, u"--nproc-per-node"_s,
                       u"2"_s,      u"--no-progress"_s, u"--"_s,    u"--task"_s,
                       u"linear"_s, u"--steps"_s,       u"10"_s}
        << QStringList{u"[r0] "_s, u"[r1] "_s};
    QTest::newRow("--exec program, 2 local ranks")
        << QStringList{u"launch"_s,
                       u"--profile"_s,
                       u"local"_s,
                       u"--nproc-per-node"_s,
                       u"2"_s,
                       u"--no-progress"_s,
                       u"--exec"_s,
                       u"--"_s,
                       u"sh"_s,
                       u"-c"_s,
                       u"echo installed rank $RANK"_s}
        << QStringList{u"[r0] installed rank 0"_s, u"[r1] installed rank 1"_s};
    QTest::newRow("built-in worker, sshd node") << QStringList{u"launch"_s,
                                                               u"--profile"_s,
                                                               u"sshnode"_s,
                                                               u"--no-progress"_s,
                                                               u"--accept-new-host-keys"_s,
                                                               u"--"_s,
                                                               u"--task"_s,
                                                               u"linear"_s,
                                                               u"--steps"_s,
                                                               u"10"_s}
                                                << QStringList{u"[r0] "_s, u"[r1] "_s};
}

void TestInstall::launchFromMovedTree()
{
    QFETCH(QStringList, args);
    QFETCH(QStringList, expected);
    if (!m_hideWhy.isEmpty())
        QSKIP(qPrintable(m_hideWhy));
    if (args.contains(u"sshnode"_s) && !m_sshWhy.isEmpty())
        QSKIP(qPrintable(m_sshWhy));
    const Result r = hiddenBuild(args);
    QVERIFY2(r.code == 0, qPrintable(r.output));
    for (const QString &line : expected)
        QVERIFY2(r.output.contains(line), qPrintable(line + u" missing in:\n"_s + r.output));
    QVERIFY2(!r.output.contains(QStringLiteral(RANKDECK_BUILD_DIR)), qPrintable(r.output));
}

QTEST_GUILESS_MAIN(TestInstall)
#include "tst_install.moc"
