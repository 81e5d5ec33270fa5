// SPDX-License-Identifier: GPL-3.0-or-later
// Longer than the house's ~600 lines: one test class for one wrapper script, case by case.
//
// The wrapper script SshRankScript generates for each rank, run here by the local /bin/sh the
// way sshd would run it (`$SHELL -c <command>`), so no sshd is needed: the channel is a QProcess.
// Checked: every field arrives byte for byte and nothing in it runs, the rank gets its own
// session, output is kept in <run dir>/<base>.out/.err and streamed after a header, the exit
// status is the rank's, setup failures exit 125/127 without a header, re-attaching resumes at
// byte offsets, and the stdin keeper and the group signal do what the header promises; the lease
// echoes, ends the run's ranks after its grace of silence and only then.
#include "transport/ssh/sshrankscript.h"
#include "util/shellquote.h"

#include "testprocesses.h"

#include <QDateTime>
#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <memory>
#include <unistd.h>
#include <vector>

using namespace rankdeck;
using rankdeck::testing::processRuns;

namespace {

QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}

// A command as sshd runs it: the user's shell with -c.
std::unique_ptr<QProcess> channel(const QByteArray &command)
{
    auto p = std::make_unique<QProcess>();
    p->setProgram(QStringLiteral("/bin/sh"));
    p->setArguments({QStringLiteral("-c"), QString::fromUtf8(command)});
    return p;
}

struct Finished
{
    bool ok = false;
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

// Runs a command to its end with `input` on stdin (then closed).
Finished runChannel(const QByteArray &command, const QByteArray &input = {}, int timeoutMs = 15000)
{
    auto p = channel(command);
    p->start();
    Finished f;
    if (!p->waitForStarted(5000))
        return f;
    p->write(input);
    p->closeWriteChannel();
    f.ok = p->waitForFinished(timeoutMs) && p->exitStatus() == QProcess::NormalExit;
    f.exitCode = p->exitCode();
    f.out = p->readAllStandardOutput();
    f.err = p->readAllStandardError();
    return f;
}

// A channel's stdout split at the header "rankdeck-ssh <pid> <stdin bytes>\n".
struct Header
{
    bool ok = false; // the header is there and well-formed
    qint64 pid = 0;
    qint64 stdinBytes = -1;
    QByteArray body; // what follows it
};

// A pid file as the wrapper writes it: "<pid> <start>\n", the start being field 22 of
// /proc/PID/stat (clock ticks after boot), so that a later process with the pid is told apart.
bool isPidFileOf(const QByteArray &content, qint64 pid)
{
    const QList<QByteArray> words = content.chopped(content.endsWith('\n') ? 1 : 0).split(' ');
    bool ok = false;
    const bool good = content.endsWith('\n') && words.size() == 2 &&
                      words[0] == QByteArray::number(pid) && words[1].toLongLong(&ok) > 0 && ok;
    if (!good)
        qWarning("pid file of %lld: [%s]", pid, content.constData());
    return good;
}

Header header(const QByteArray &out)
{
    Header h;
    const qsizetype nl = out.indexOf('\n');
    if (nl < 0 || !out.startsWith(SshRankScript::headerPrefix()))
        return h;
    const QList<QByteArray> words =
        out.left(nl).mid(SshRankScript::headerPrefix().size()).split(' ');
    if (words.size() != 2)
        return h;
    bool ok1 = false, ok2 = false;
    h.pid = words[0].toLongLong(&ok1);
    h.stdinBytes = words[1].toLongLong(&ok2);
    h.body = out.mid(nl + 1);
    h.ok = ok1 && ok2 && h.pid > 0;
    return h;
}

} // namespace

class TestSshRankScript : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    int m_serial = 0;

    QString uniqueTag()
    {
        return QStringLiteral("tst-sshrankscript-%1-%2").arg(::getpid()).arg(++m_serial);
    }

    // A rank that is /bin/sh running `script` in the test's directory.
    SshRankScript::Start shellRank(const QString &script, const QString &runDirectory,
                                   int grace = 5)
    {
        SshRankScript::Start s;
        s.tag = uniqueTag();
        s.runDirectory = runDirectory;
        s.baseName = QStringLiteral("rank0.a1");
        s.workingDirectory = m_dir.path();
        s.graceSec = grace;
        s.program = QStringLiteral("/bin/sh");
        s.arguments = {QStringLiteral("-c"), script, QStringLiteral("rank")};
        return s;
    }
    // A rank that starts a child and waits: the channel (open), the header, the child's pid.
    bool startSleepingRank(const SshRankScript::Start &s, std::unique_ptr<QProcess> *p, Header *h,
                           qint64 *child)
    {
        *p = channel(SshRankScript::start(s));
        (*p)->start();
        if (!(*p)->waitForStarted(5000))
            return false;
        QByteArray out;
        while (out.count('\n') < 2) {
            if (!(*p)->waitForReadyRead(10000))
                return false;
            out += (*p)->readAllStandardOutput();
        }
        *h = header(out);
        *child = h->body.trimmed().toLongLong();
        return h->ok && *child > 0;
    }
    // Nothing of the run's wrapper, keeper or tails is left over.
    static bool wrapperGone(const QString &tag)
    {
        return QTest::qWaitFor(
            [&] { return testing::processesMatching(QStringLiteral("rankdeck:") + tag).isEmpty(); },
            5000);
    }

private slots:
    void initTestCase();
    void commandQuotesEveryField();
    void stdinEndingAtOnceNeverBlocksTheRank();
    void startRunsTheRankWithItsFields();
    void exitStatus_data();
    void exitStatus();
    void setupFailures_data();
    void setupFailures();
    void earlierTryIsReplacedOtherAttemptsKept();
    void attachAfterEnd_data();
    void attachAfterEnd();
    void attachWithoutRank();
    void attachResumesRunningRankWithoutGap();
    void keeperHoldsStdinUntilMarkedClosed();
    void signalGroup_data();
    void signalGroup();
    void rankStartsWithNoSignalIgnored();
    void lease_data();
    void lease();
    void signalGroupOnlyToTheRankStarted_data();
    void signalGroupOnlyToTheRankStarted();
    void pidsThatNameMoreThanOneProcessAreRefused_data();
    void pidsThatNameMoreThanOneProcessAreRefused();
    void leaseSparesWhatIsNotItsRank();
};

void TestSshRankScript::initTestCase()
{
    QVERIFY(m_dir.isValid());
    for (const char *tool : {"setsid", "mkfifo", "tail", "tee", "pgrep"}) {
        if (QStandardPaths::findExecutable(QString::fromLatin1(tool)).isEmpty())
            QSKIP(qPrintable(QStringLiteral("%1 is not installed").arg(QString::fromLatin1(tool))));
    }
    QProcess tail;
    tail.start(QStringLiteral("tail"), {QStringLiteral("--version")});
    tail.waitForFinished(5000);
    if (!tail.readAllStandardOutput().contains("GNU"))
        QSKIP("the wrapper needs GNU tail (--pid, -s)");
}

// Every variable part is one quoted word after the script, in the order the script reads them.
void TestSshRankScript::commandQuotesEveryField()
{
    SshRankScript::Start s;
    s.tag = QStringLiteral("run'1 $(id)");
    s.runDirectory = QStringLiteral("/runs/it's here");
    s.baseName = QStringLiteral("rank3.a2");
    s.workingDirectory = QStringLiteral("/work `id`");
    s.graceSec = -1;
    s.environment = {{QStringLiteral("A"), QStringLiteral("x y")},
                     {QStringLiteral("B"), QStringLiteral("'\n")}};
    s.program = QStringLiteral("/opt/my worker");
    s.arguments = {QStringLiteral("--name"), QStringLiteral("a;b"), QString()};
    const QByteArray cmd = SshRankScript::start(s);
    QVERIFY(cmd.startsWith("exec /bin/sh -c '"));

    const QList<QByteArray> words{shell::quote(QStringLiteral("rankdeck:") + s.tag),
                                  shell::quote(s.runDirectory),
                                  shell::quote(s.baseName),
                                  shell::quote(s.workingDirectory),
                                  "'-1'",
                                  "'2'",
                                  shell::quote(QStringLiteral("A=x y")),
                                  shell::quote(QStringLiteral("B='\n")),
                                  shell::quote(s.program),
                                  "'--name'",
                                  "'a;b'",
                                  "''"};
    QByteArray tail;
    for (const QByteArray &w : words)
        tail += ' ' + w;
    QVERIFY2(cmd.endsWith(tail), cmd.right(tail.size() + 40).constData());

    const QByteArray attach =
        SshRankScript::attach(s.tag, s.runDirectory, s.baseName, 30, 1234, 56);
    QVERIFY(attach.startsWith("exec /bin/sh -c '"));
    QVERIFY(attach.endsWith(' ' + shell::quote(QStringLiteral("rankdeck:") + s.tag) + ' ' +
                            shell::quote(s.runDirectory) + " 'rank3.a2' '30' '1234' '56'"));
    QVERIFY(SshRankScript::markStdinClosed(s.runDirectory, s.baseName)
                .endsWith(' ' + shell::quote(s.runDirectory) + " 'rank3.a2'"));
    QVERIFY(SshRankScript::signalGroup(s.runDirectory, s.baseName, 4321, SIGTERM)
                .endsWith(' ' + shell::quote(s.runDirectory) + " 'rank3.a2' '4321' '15'"));
}

// With no grace and a channel whose stdin ends at once, the keeper may be done before the rank
// opens the FIFO; the rank must still start, read the end of its stdin and exit (it used to
// block in open() for ever, about one run in eight with 20 environment variables).
void TestSshRankScript::stdinEndingAtOnceNeverBlocksTheRank()
{
    for (int i = 0; i < 24; ++i) {
        const QString runDir = m_dir.filePath(QStringLiteral("eof-%1").arg(++m_serial));
        SshRankScript::Start s = shellRank(QStringLiteral("cat; echo done"), runDir, 0);
        for (int v = 0; v < 20; ++v)
            s.environment.append(
                {QStringLiteral("RANKDECK_TEST_%1").arg(v), QStringLiteral("value %1").arg(v)});
        const Finished f = runChannel(SshRankScript::start(s), {}, 10000);
        QVERIFY2(
            f.ok,
            qPrintable(
                QStringLiteral("try %1 did not end: %2").arg(i).arg(QString::fromUtf8(f.err))));
        QCOMPARE(f.exitCode, 0);
        QVERIFY(header(f.out).body.endsWith("done\n"));
        QVERIFY(wrapperGone(s.tag));
    }
}

void TestSshRankScript::startRunsTheRankWithItsFields()
{
    // Hostile everywhere: quotes, substitutions, newlines, non-ASCII, in paths, values and
    // arguments. A `pwned*` file anywhere means something ran that should not have.
    const QString hostile =
        QStringLiteral(u"'$(touch pwned1)' `touch pwned2` \"$HOME\" ; touch pwned3\n\u00e9\u65e5");
    const QString runDir = m_dir.filePath(QStringLiteral(u"runs/run 'one' $(touch pwned4)/\u00e9"));
    const QString workDir = m_dir.filePath(QStringLiteral("work `touch pwned5` dir"));
    QVERIFY(QDir().mkpath(workDir));

    SshRankScript::Start s = shellRank(
        QStringLiteral(
            "read -r _ _ _ _ pgrp sid _ </proc/$$/stat; echo \"pid=$$ pgrp=$pgrp sid=$sid\"; "
            "printf 'pwd=%s\\n' \"$(pwd -P)\"; "
            "printf 'A=[%s]\\n' \"$RD_A\"; printf 'B=[%s]\\n' \"$RD_B\"; printf 'E=[%s]\\n' "
            "\"${RD_EMPTY-unset}\"; "
            "for a; do printf '<%s>' \"$a\"; done; echo; "
            "echo 'to stderr' >&2; "
            "IFS= read -r line; printf 'stdin=[%s]\\n' \"$line\"; exit 3"),
        runDir);
    s.workingDirectory = workDir;
    s.environment = {{QStringLiteral("RD_A"), hostile},
                     {QStringLiteral("RD_B"), QStringLiteral("a=b=c")},
                     {QStringLiteral("RD_EMPTY"), QString()}};
    s.arguments << hostile << QString() << QStringLiteral("*") << QStringLiteral("-n");

    const Finished f = runChannel(SshRankScript::start(s), "hello 'world'\n");
    QVERIFY(f.ok);
    QCOMPARE(f.exitCode, 3);
    const Header h = header(f.out);
    QVERIFY2(h.ok, f.out.left(200).constData());
    QCOMPARE(h.stdinBytes, 0);
    const qint64 pid = h.pid;
    const QByteArray &out = h.body;

    const QByteArray expected = QStringLiteral("pid=%1 pgrp=%1 sid=%1\n").arg(pid).toUtf8() +
                                "pwd=" + QFileInfo(workDir).canonicalFilePath().toUtf8() + "\n" +
                                "A=[" + hostile.toUtf8() + "]\nB=[a=b=c]\nE=[]\n" + "<" +
                                hostile.toUtf8() + "><><*><-n>\n" + "stdin=[hello 'world']\n";
    QCOMPARE(QString::fromUtf8(out), QString::fromUtf8(expected));
    QCOMPARE(f.err, QByteArray("to stderr\n"));

    // The node keeps all of it, private to the user.
    const QString base = runDir + QStringLiteral("/rank0.a1");
    QCOMPARE(readFile(base + QStringLiteral(".out")), expected);
    QCOMPARE(readFile(base + QStringLiteral(".err")), QByteArray("to stderr\n"));
    QCOMPARE(readFile(base + QStringLiteral(".exit")), QByteArray("3\n"));
    QVERIFY(isPidFileOf(readFile(base + QStringLiteral(".pid")), pid));
    QCOMPARE(readFile(base + QStringLiteral(".stdin-log")), QByteArray("hello 'world'\n"));
    QVERIFY(QFileInfo(base + QStringLiteral(".in")).isSymLink() ||
            QFileInfo::exists(base + QStringLiteral(".in")));
    QCOMPARE(QFileInfo(runDir).permissions() & (QFileDevice::ReadGroup | QFileDevice::ReadOther),
             QFileDevice::Permissions());
    QCOMPARE(QFileInfo(base + QStringLiteral(".out")).permissions() &
                 (QFileDevice::ReadGroup | QFileDevice::ReadOther),
             QFileDevice::Permissions());

    QDirIterator it(m_dir.path(),
                    QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        QVERIFY2(!it.fileName().startsWith(QStringLiteral("pwned")), qPrintable(path));
    }
    QVERIFY(wrapperGone(s.tag));
}

void TestSshRankScript::exitStatus_data()
{
    QTest::addColumn<QString>("script");
    QTest::addColumn<int>("status");

    QTest::newRow("success") << QStringLiteral("exit 0") << 0;
    QTest::newRow("exit 1") << QStringLiteral("exit 1") << 1;
    QTest::newRow("exit 126") << QStringLiteral("exit 126") << 126;
    QTest::newRow("exit 255") << QStringLiteral("exit 255") << 255;
    QTest::newRow("SIGKILL") << QStringLiteral("kill -KILL $$") << 128 + SIGKILL;
    QTest::newRow("SIGTERM") << QStringLiteral("kill -TERM $$") << 128 + SIGTERM;
    QTest::newRow("SIGSEGV") << QStringLiteral("ulimit -c 0; kill -SEGV $$") << 128 + SIGSEGV;
}

void TestSshRankScript::exitStatus()
{
    QFETCH(QString, script);
    QFETCH(int, status);
    const QString runDir = m_dir.filePath(QStringLiteral("exit-%1").arg(++m_serial));
    const SshRankScript::Start s = shellRank(script, runDir);
    const Finished f = runChannel(SshRankScript::start(s));
    QVERIFY(f.ok);
    QCOMPARE(f.exitCode, status);
    QVERIFY(f.out.startsWith(SshRankScript::headerPrefix()));
    QCOMPARE(readFile(runDir + QStringLiteral("/rank0.a1.exit")),
             QByteArray::number(status) + '\n');
    QVERIFY(wrapperGone(s.tag));
}

void TestSshRankScript::setupFailures_data()
{
    QTest::addColumn<QString>("program");
    QTest::addColumn<QString>("workingDirectory"); // empty: the test's temporary directory
    QTest::addColumn<QString>("runDirectory");     // empty: a fresh one
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("errorContains");

    QFile plain(m_dir.filePath(QStringLiteral("plain file")));
    QVERIFY(plain.open(QIODevice::WriteOnly));
    plain.write("#!/bin/sh\ntouch pwned\n");
    plain.close();
    QVERIFY(plain.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner));

    QTest::newRow("absolute program missing")
        << m_dir.filePath(QStringLiteral("no such/prog")) << QString() << QString() << 127
        << QStringLiteral("is not an executable file");
    QTest::newRow("program not on PATH")
        << QStringLiteral("rankdeck-no-such-program-4711") << QString() << QString() << 127
        << QStringLiteral("rankdeck-no-such-program-4711 is not an executable file");
    QTest::newRow("program not executable") << plain.fileName() << QString() << QString() << 127
                                            << QStringLiteral("is not an executable file");
    QTest::newRow("program is a directory") << m_dir.path() << QString() << QString() << 127
                                            << QStringLiteral("is not an executable file");
    QTest::newRow("working directory missing")
        << QStringLiteral("/bin/true") << m_dir.filePath(QStringLiteral("gone")) << QString() << 125
        << QStringLiteral("gone");
    QTest::newRow("run directory under a file")
        << QStringLiteral("/bin/true") << QString() << plain.fileName() + QStringLiteral("/run")
        << 125 << QString();
}

// The wrapper fails before the header, so the launcher sees a setup error and no rank.
void TestSshRankScript::setupFailures()
{
    QFETCH(QString, program);
    QFETCH(QString, workingDirectory);
    QFETCH(QString, runDirectory);
    QFETCH(int, status);
    QFETCH(QString, errorContains);

    SshRankScript::Start s;
    s.tag = uniqueTag();
    s.runDirectory = runDirectory.isEmpty()
                         ? m_dir.filePath(QStringLiteral("setup-%1").arg(m_serial))
                         : runDirectory;
    s.baseName = QStringLiteral("rank0.a1");
    s.workingDirectory = workingDirectory.isEmpty() ? m_dir.path() : workingDirectory;
    s.program = program;
    const Finished f = runChannel(SshRankScript::start(s));
    QVERIFY(f.ok);
    QCOMPARE(f.exitCode, status);
    QVERIFY2(f.out.isEmpty(), f.out.constData());
    QVERIFY2(QString::fromUtf8(f.err).contains(errorContains), f.err.constData());
    QVERIFY(!QFileInfo::exists(s.runDirectory + QStringLiteral("/rank0.a1.pid")));
    QVERIFY(!QFileInfo::exists(m_dir.filePath(QStringLiteral("pwned"))));
}

// A restart under the same base name starts clean; another attempt's files stay as they were.
void TestSshRankScript::earlierTryIsReplacedOtherAttemptsKept()
{
    const QString runDir = m_dir.filePath(QStringLiteral("retry"));
    QVERIFY(QDir().mkpath(runDir));
    auto put = [&](const QString &name, const QByteArray &content) {
        QFile f(runDir + QLatin1Char('/') + name);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(content);
    };
    for (const QString &base : {QStringLiteral("rank0.a1"), QStringLiteral("rank0.a2")}) {
        put(base + QStringLiteral(".out"), "old out of " + base.toUtf8() + "\n");
        put(base + QStringLiteral(".err"), "old err\n");
        put(base + QStringLiteral(".exit"), "99\n");
        put(base + QStringLiteral(".pid"), "1\n");
        put(base + QStringLiteral(".stdin-log"), "old stdin\n");
        put(base + QStringLiteral(".in"), "not a fifo\n");
    }
    // A stale stdin-closed marker would end stdin at once; the run must not see it.
    put(QStringLiteral("rank0.a1.stdin-closed"), {});

    SshRankScript::Start s =
        shellRank(QStringLiteral("IFS= read -r l; echo \"new $l\""), runDir, 5);
    const Finished f = runChannel(SshRankScript::start(s), "input\n");
    QVERIFY(f.ok);
    QCOMPARE(f.exitCode, 0);
    const Header h = header(f.out);
    QVERIFY(h.ok);
    const qint64 pid = h.pid;
    QCOMPARE(h.body, QByteArray("new input\n"));
    QCOMPARE(readFile(runDir + QStringLiteral("/rank0.a1.out")), QByteArray("new input\n"));
    QCOMPARE(readFile(runDir + QStringLiteral("/rank0.a1.err")), QByteArray());
    QCOMPARE(readFile(runDir + QStringLiteral("/rank0.a1.exit")), QByteArray("0\n"));
    QVERIFY(isPidFileOf(readFile(runDir + QStringLiteral("/rank0.a1.pid")), pid));
    QCOMPARE(readFile(runDir + QStringLiteral("/rank0.a1.stdin-log")), QByteArray("input\n"));
    QVERIFY(!QFileInfo::exists(runDir + QStringLiteral("/rank0.a1.stdin-closed")));

    QCOMPARE(readFile(runDir + QStringLiteral("/rank0.a2.out")),
             QByteArray("old out of rank0.a2\n"));
    QCOMPARE(readFile(runDir + QStringLiteral("/rank0.a2.exit")), QByteArray("99\n"));
    QCOMPARE(readFile(runDir + QStringLiteral("/rank0.a2.in")), QByteArray("not a fifo\n"));
    QVERIFY(wrapperGone(s.tag));
}

void TestSshRankScript::attachAfterEnd_data()
{
    QTest::addColumn<qint64>("stdoutOffset");
    QTest::addColumn<qint64>("stderrOffset");

    QTest::newRow("from the start") << qint64(0) << qint64(0);
    QTest::newRow("mid-line") << qint64(5) << qint64(3);
    QTest::newRow("at a line end") << qint64(12) << qint64(9);
    QTest::newRow("everything seen") << qint64(24) << qint64(18);
    QTest::newRow("beyond the end") << qint64(1000) << qint64(1000);
}

// After the rank ended, attach() replays what the launcher missed and the rank's exit status.
void TestSshRankScript::attachAfterEnd()
{
    QFETCH(qint64, stdoutOffset);
    QFETCH(qint64, stderrOffset);

    const QString runDir = m_dir.filePath(QStringLiteral("attach-%1").arg(++m_serial));
    const QByteArray out = "out line 1\nout line 2\n\nx"; // 24 bytes
    const QByteArray err = "err one\nerr two\nzz";        // 18 bytes
    QCOMPARE(out.size(), 24);
    QCOMPARE(err.size(), 18);
    SshRankScript::Start s = shellRank(
        QStringLiteral("read -r _; printf '%s' \"$1\"; printf '%s' \"$2\" >&2; exit 6"), runDir);
    s.arguments << QString::fromUtf8(out) << QString::fromUtf8(err);
    const Finished first = runChannel(SshRankScript::start(s), "abc\n");
    QVERIFY(first.ok);
    QCOMPARE(first.exitCode, 6);
    const Header h = header(first.out);
    QVERIFY(h.ok);
    QCOMPARE(h.body, out);
    QCOMPARE(first.err, err);

    const Finished again =
        runChannel(SshRankScript::attach(s.tag, runDir, s.baseName, 0, stdoutOffset, stderrOffset));
    QVERIFY(again.ok);
    QCOMPARE(again.exitCode, 6);
    const Header resumed = header(again.out);
    QVERIFY2(resumed.ok, again.out.constData());
    QCOMPARE(resumed.pid, h.pid);
    QCOMPARE(resumed.stdinBytes, 4); // "abc\n" reached the rank
    QCOMPARE(resumed.body, out.mid(stdoutOffset));
    QCOMPARE(again.err, err.mid(stderrOffset));
    QVERIFY(wrapperGone(s.tag));
}

void TestSshRankScript::attachWithoutRank()
{
    const QString runDir = m_dir.filePath(QStringLiteral("empty-run"));
    QVERIFY(QDir().mkpath(runDir));
    const Finished f =
        runChannel(SshRankScript::attach(uniqueTag(), runDir, QStringLiteral("rank7.a1"), 0, 0, 0));
    QVERIFY(f.ok);
    QCOMPARE(f.exitCode, SshRankScript::kSetupFailed);
    QVERIFY(f.out.isEmpty());
    QVERIFY2(f.err.contains("no rank rank7.a1 to re-attach to"), f.err.constData());
}

// A detached rank (grace -1) whose launcher went away: a new channel attaches at the offset it
// had, gets only what came after, drives stdin, and sees the real exit status.
void TestSshRankScript::attachResumesRunningRankWithoutGap()
{
    const QString runDir = m_dir.filePath(QStringLiteral("detached"));
    SshRankScript::Start s =
        shellRank(QStringLiteral("echo first; echo first-err >&2; IFS= read -r line; echo "
                                 "\"got=$line\"; echo done-err >&2; exit 7"),
                  runDir, -1);
    // The first channel has no stdin (it ended at once) and writes to files: the launcher that
    // started it is gone, and nobody reads what it streams.
    auto first = channel(SshRankScript::start(s));
    first->setStandardInputFile(QProcess::nullDevice());
    first->setStandardOutputFile(m_dir.filePath(QStringLiteral("first-channel.out")));
    first->setStandardErrorFile(m_dir.filePath(QStringLiteral("first-channel.err")));
    first->start();
    QVERIFY(first->waitForStarted(5000));
    const QString base = runDir + QStringLiteral("/rank0.a1");
    QTRY_COMPARE_WITH_TIMEOUT(readFile(base + QStringLiteral(".out")), QByteArray("first\n"),
                              10000);
    QTRY_COMPARE_WITH_TIMEOUT(readFile(base + QStringLiteral(".err")), QByteArray("first-err\n"),
                              10000);
    // End of its stdin did not reach the rank: the keeper holds the FIFO open.
    QVERIFY(!first->waitForFinished(1200));

    auto again = channel(SshRankScript::attach(s.tag, runDir, s.baseName, -1, 6, 10));
    again->start();
    QVERIFY(again->waitForStarted(5000));
    again->write("hello\n");
    again->closeWriteChannel();
    QVERIFY(again->waitForFinished(15000));
    QCOMPARE(again->exitCode(), 7);
    const QByteArray out = again->readAllStandardOutput();
    const Header resumed = header(out);
    QVERIFY2(resumed.ok, out.constData());
    QCOMPARE(resumed.stdinBytes, 0);
    QCOMPARE(resumed.body, QByteArray("got=hello\n"));
    const qint64 pid = resumed.pid;
    QCOMPARE(again->readAllStandardError(), QByteArray("done-err\n"));

    QVERIFY(first->waitForFinished(10000));
    QCOMPARE(first->exitCode(), 7);
    QCOMPARE(readFile(m_dir.filePath(QStringLiteral("first-channel.out"))),
             "rankdeck-ssh " + QByteArray::number(pid) + " 0\nfirst\ngot=hello\n");
    QCOMPARE(readFile(base + QStringLiteral(".stdin-log")), QByteArray("hello\n"));
    QCOMPARE(readFile(base + QStringLiteral(".exit")), QByteArray("7\n"));
    QVERIFY(wrapperGone(s.tag));
}

// With a grace period, end of channel stdin is not end of the rank's stdin (the connection may
// come back); markStdinClosed() says it was on purpose, and the rank sees EOF within a second.
void TestSshRankScript::keeperHoldsStdinUntilMarkedClosed()
{
    const QString runDir = m_dir.filePath(QStringLiteral("grace"));
    SshRankScript::Start s = shellRank(QStringLiteral("cat; echo eof"), runDir, 60);
    auto p = channel(SshRankScript::start(s));
    p->start();
    QVERIFY(p->waitForStarted(5000));
    p->write("abc\n");
    p->closeWriteChannel();
    QTRY_COMPARE_WITH_TIMEOUT(readFile(runDir + QStringLiteral("/rank0.a1.out")),
                              QByteArray("abc\n"), 10000);
    QVERIFY(!p->waitForFinished(1500));

    const Finished mark = runChannel(SshRankScript::markStdinClosed(runDir, s.baseName));
    QVERIFY(mark.ok);
    QCOMPARE(mark.exitCode, 0);
    QVERIFY(QFileInfo::exists(runDir + QStringLiteral("/rank0.a1.stdin-closed")));
    QVERIFY(p->waitForFinished(10000));
    QCOMPARE(p->exitCode(), 0);
    const Header h = header(p->readAllStandardOutput());
    QVERIFY(h.ok);
    QCOMPARE(h.body, QByteArray("abc\neof\n"));
    QVERIFY(wrapperGone(s.tag));
}

void TestSshRankScript::signalGroup_data()
{
    QTest::addColumn<int>("signal");
    QTest::newRow("SIGTERM") << int(SIGTERM);
    QTest::newRow("SIGKILL") << int(SIGKILL);
    QTest::newRow("SIGUSR1") << int(SIGUSR1);
}

// signalGroup() reaches the rank and what it started (nobody else kills them on the node).
void TestSshRankScript::signalGroup()
{
    QFETCH(int, signal);
    const QString runDir = m_dir.filePath(QStringLiteral("signal-%1").arg(++m_serial));
    SshRankScript::Start s = shellRank(QStringLiteral("sleep 60 & echo $!; wait"), runDir);
    auto p = channel(SshRankScript::start(s));
    p->start();
    QVERIFY(p->waitForStarted(5000));
    QByteArray out;
    while (out.count('\n') < 2) {
        QVERIFY(p->waitForReadyRead(10000));
        out += p->readAllStandardOutput();
    }
    const Header h = header(out);
    QVERIFY(h.ok);
    const qint64 pid = h.pid;
    const qint64 child = h.body.trimmed().toLongLong();
    QVERIFY(child > 0);
    QVERIFY(processRuns(child));

    const Finished kill = runChannel(SshRankScript::signalGroup(runDir, s.baseName, pid, signal));
    QVERIFY(kill.ok);
    QCOMPARE(kill.exitCode, 0);
    QVERIFY(p->waitForFinished(10000));
    QCOMPARE(p->exitCode(), 128 + signal);
    QCOMPARE(readFile(runDir + QStringLiteral("/rank0.a1.exit")),
             QByteArray::number(128 + signal) + '\n');
    QTRY_VERIFY_WITH_TIMEOUT(!processRuns(child), 5000);
    p->closeWriteChannel();
    QVERIFY(wrapperGone(s.tag));
}

// The rank is started as an asynchronous list (`( … ) &`) of a non-interactive sh, and POSIX
// has such lists ignore SIGINT and SIGQUIT; exec keeps that. A rank on a node then cannot be
// interrupted with SIGINT (Python's KeyboardInterrupt, torchrun's forwarding), unlike a local one.
void TestSshRankScript::rankStartsWithNoSignalIgnored()
{
    const QString runDir = m_dir.filePath(QStringLiteral("sigign"));
    const SshRankScript::Start s =
        shellRank(QStringLiteral("grep '^SigIgn:' /proc/self/status"), runDir);
    // The channel's shell itself starts with nothing ignored.
    auto p = channel(SshRankScript::start(s));
    p->setChildProcessModifier([] {
        for (int sig : {SIGINT, SIGQUIT})
            ::signal(sig, SIG_DFL);
    });
    p->start();
    QVERIFY(p->waitForStarted(5000));
    p->write("\n");
    p->closeWriteChannel();
    QVERIFY(p->waitForFinished(10000));
    QCOMPARE(p->exitCode(), 0);
    const Header h = header(p->readAllStandardOutput());
    QVERIFY(h.ok);
    const QByteArray &out = h.body;
    QVERIFY2(out.startsWith("SigIgn:"), out.constData());
    bool ok = false;
    const quint64 ignored = out.mid(7).trimmed().toULongLong(&ok, 16);
    QVERIFY(ok);
    QEXPECT_FAIL("", "the wrapper's `( … ) &` leaves SIGINT and SIGQUIT ignored in the rank",
                 Continue);
    QCOMPARE(ignored & ((1ull << (SIGINT - 1)) | (1ull << (SIGQUIT - 1))), 0ull);
    QVERIFY(wrapperGone(s.tag));
}

void TestSshRankScript::lease_data()
{
    QTest::addColumn<int>("grace");
    QTest::addColumn<bool>("closeStdin");
    QTest::addColumn<bool>("ranksEnd");
    // A cut link: the channel stays open and nothing comes.
    QTest::newRow("silent for the grace") << 1 << false << true;
    // The launcher closed the channel or died: the keepers' grace decides, not the lease.
    QTest::newRow("end of stdin") << 1 << true << false;
    QTest::newRow("detached, silent") << -1 << false << false;
}

void TestSshRankScript::lease()
{
    QFETCH(int, grace);
    QFETCH(bool, closeStdin);
    QFETCH(bool, ranksEnd);
    const QString runDir = m_dir.filePath(QStringLiteral("lease-%1").arg(++m_serial));
    // The rank's channel stays open throughout, so its keeper holds stdin open (a cut link).
    SshRankScript::Start s = shellRank(QStringLiteral("echo up; sleep 60"), runDir);
    auto rank = channel(SshRankScript::start(s));
    rank->start();
    QVERIFY(rank->waitForStarted(5000));
    QByteArray out;
    while (!out.contains("up\n")) {
        QVERIFY(rank->waitForReadyRead(10000));
        out += rank->readAllStandardOutput();
    }
    const Header h = header(out);
    QVERIFY(h.ok);

    // waitForFinished() is false for a process that has finished already.
    const auto ended = [](QProcess *p, int ms) {
        return p->state() == QProcess::NotRunning || p->waitForFinished(ms);
    };
    auto lease = channel(SshRankScript::lease(s.tag, runDir, grace));
    lease->start();
    QVERIFY(lease->waitForStarted(5000));
    // The silence is timed from just before the last beat is written: the lease reads that beat
    // later still, so the rank cannot end sooner than `grace` after this clock started, however
    // late a loaded machine runs the test or the script (a clock started after the echo came
    // back measured less than the real silence, and failed under load).
    QElapsedTimer silent;
    for (const char *beat : {".", "."}) {
        silent.start();
        lease->write(beat);
        QVERIFY(lease->waitForReadyRead(5000));
        QCOMPARE(lease->readAllStandardOutput(), QByteArray(beat));
    }
    if (closeStdin) {
        lease->closeWriteChannel();
        QVERIFY(ended(lease.get(), 5000));
        QCOMPARE(lease->exitCode(), 0);
    }
    if (ranksEnd) {
        QTRY_VERIFY_WITH_TIMEOUT(!processRuns(h.pid), 5000);
        qInfo("the rank ended %lld ms into the silence (grace %d s)", qint64(silent.elapsed()),
              grace);
        QVERIFY2(silent.elapsed() >= 1000 * grace, qPrintable(QString::number(silent.elapsed())));
        QVERIFY(ended(rank.get(), 5000));
        QCOMPARE(rank->exitCode(), 128 + SIGTERM);
        QVERIFY(ended(lease.get(), 10000));
        QCOMPARE(lease->exitCode(), 0);
    } else {
        QTest::qWait(2500);
        QVERIFY2(processRuns(h.pid), "the lease ended a rank it had no reason to end");
        runChannel(SshRankScript::signalGroup(runDir, s.baseName, h.pid, SIGKILL));
        QVERIFY(ended(rank.get(), 10000));
        lease->closeWriteChannel();
        QVERIFY(ended(lease.get(), 5000));
    }
    QVERIFY(wrapperGone(s.tag));
}

void TestSshRankScript::signalGroupOnlyToTheRankStarted_data()
{
    // The pid file as the test leaves it: %1 the rank's pid, %2 the start the wrapper recorded;
    // empty: as the wrapper wrote it; "-": removed.
    QTest::addColumn<QString>("pidFile");
    QTest::addColumn<bool>("writtenBeforeTheRank"); // its time set to 2020
    QTest::addColumn<bool>("signalled");
    QTest::newRow("as the wrapper wrote it") << QString() << false << true;
    // Pid reuse cannot be forced: the rank given a wrong start stands for a reused pid.
    QTest::newRow("another start (a reused pid)") << QStringLiteral("%1 1\n") << false << false;
    QTest::newRow("start garbled") << QStringLiteral("%1 12x\n") << false << false;
    QTest::newRow("names another pid") << QStringLiteral("1%1 %2\n") << false << false;
    QTest::newRow("no pid file") << QStringLiteral("-") << false << false;
    // An older RankDeck's pid file, without a start: its own rank still stops, as long as the
    // process started no later than the file was written.
    QTest::newRow("older format") << QStringLiteral("%1\n") << false << true;
    QTest::newRow("older format, older than the process")
        << QStringLiteral("%1\n") << true << false;
}

// signalGroup() checks the pid file on the node before `kill -- -PGID`: a process that is not
// the rank the wrapper started is left alone, and the launcher is told (exit 1, a message).
void TestSshRankScript::signalGroupOnlyToTheRankStarted()
{
    QFETCH(QString, pidFile);
    QFETCH(bool, writtenBeforeTheRank);
    QFETCH(bool, signalled);
    const QString runDir = m_dir.filePath(QStringLiteral("identity-%1").arg(++m_serial));
    const SshRankScript::Start s = shellRank(QStringLiteral("sleep 60 & echo $!; wait"), runDir);
    std::unique_ptr<QProcess> p;
    Header h;
    qint64 child = 0;
    QVERIFY(startSleepingRank(s, &p, &h, &child));
    const QString path = runDir + QStringLiteral("/rank0.a1.pid");
    const QByteArray written = readFile(path);
    QVERIFY(isPidFileOf(written, h.pid));
    if (pidFile == QLatin1String("-")) {
        QVERIFY(QFile::remove(path));
    } else if (!pidFile.isEmpty()) {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(
            QString(pidFile)
                .replace(QLatin1String("%1"), QString::number(h.pid))
                .replace(QLatin1String("%2"), QString::fromLatin1(written.trimmed().split(' ')[1]))
                .toUtf8());
        QVERIFY(f.flush());
        if (writtenBeforeTheRank)
            QVERIFY(f.setFileTime(QDateTime(QDate(2020, 1, 1), QTime(0, 0), Qt::UTC),
                                  QFileDevice::FileModificationTime));
        f.close();
    }
    const Finished kill =
        runChannel(SshRankScript::signalGroup(runDir, s.baseName, h.pid, SIGTERM));
    QVERIFY(kill.ok);
    if (signalled) {
        QCOMPARE(kill.exitCode, 0);
        QVERIFY(p->waitForFinished(10000));
        QCOMPARE(p->exitCode(), 128 + SIGTERM);
        QTRY_VERIFY_WITH_TIMEOUT(!processRuns(child), 5000);
    } else {
        QCOMPARE(kill.exitCode, 1);
        QVERIFY2(kill.err.startsWith("rankdeck: not signalling pid " + QByteArray::number(h.pid)),
                 kill.err.constData());
        QTest::qWait(300);
        QVERIFY2(processRuns(h.pid) && processRuns(child), "a refused signal reached the rank");
        QCOMPARE(p->state(), QProcess::Running);
        // Still running, so its group is still the rank's.
        QCOMPARE(::kill(-pid_t(h.pid), SIGKILL), 0);
        QVERIFY(p->waitForFinished(10000));
    }
    p->closeWriteChannel();
    QVERIFY(wrapperGone(s.tag));
}

void TestSshRankScript::pidsThatNameMoreThanOneProcessAreRefused_data()
{
    QTest::addColumn<QByteArray>("pidFile");
    QTest::addColumn<qint64>("pid");
    // `kill -- -0` is the caller's own group (here: the test runner's, ctest and its shell),
    // `kill -- -1` every process it may signal. Signal 0 only probes, should the check ever break.
    QTest::newRow("0") << QByteArray("0\n") << qint64(0);
    QTest::newRow("1") << QByteArray("1\n") << qint64(1);
    QTest::newRow("1 with init's start") << QByteArray("1 START\n") << qint64(1);
    QTest::newRow("-1") << QByteArray("-1\n") << qint64(-1);
    QTest::newRow("00") << QByteArray("00\n") << qint64(0);
    QTest::newRow("empty") << QByteArray() << qint64(0);
}

void TestSshRankScript::pidsThatNameMoreThanOneProcessAreRefused()
{
    QFETCH(QByteArray, pidFile);
    QFETCH(qint64, pid);
    const QString runDir = m_dir.filePath(QStringLiteral("refused-%1").arg(++m_serial));
    QVERIFY(QDir().mkpath(runDir));
    QFile init(QStringLiteral("/proc/1/stat"));
    QVERIFY(init.open(QIODevice::ReadOnly));
    const QByteArray initStat = init.readAll();
    const QList<QByteArray> initFields =
        initStat.mid(initStat.lastIndexOf(')') + 2).simplified().split(' ');
    QFile f(runDir + QStringLiteral("/rank0.a1.pid"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QByteArray(pidFile).replace("START", initFields.value(19)));
    f.close();
    const Finished kill =
        runChannel(SshRankScript::signalGroup(runDir, QStringLiteral("rank0.a1"), pid, 0));
    QVERIFY(kill.ok);
    QCOMPARE(kill.exitCode, 1);
    QVERIFY2(kill.err.startsWith("rankdeck: not signalling pid"), kill.err.constData());
}

// A lease that ends the run's ranks after its grace of silence goes by their pid files too:
// pid files whose process is not the rank started (a wrong start, an older file that predates
// the process) are skipped, while the rank is ended.
void TestSshRankScript::leaseSparesWhatIsNotItsRank()
{
    const QString runDir = m_dir.filePath(QStringLiteral("lease-spares-%1").arg(++m_serial));
    const SshRankScript::Start s = shellRank(QStringLiteral("sleep 60 & echo $!; wait"), runDir);
    std::unique_ptr<QProcess> rank;
    Header h;
    qint64 child = 0;
    QVERIFY(startSleepingRank(s, &rank, &h, &child));
    // Bystanders that look like ranks (each leads its own session and group), named by pid files
    // that do not name them as they are.
    std::vector<std::unique_ptr<QProcess>> bystanders;
    for (int i = 1; i <= 2; ++i) {
        auto b = std::make_unique<QProcess>();
        b->setChildProcessModifier([] { ::setsid(); });
        b->start(QStringLiteral("/bin/sleep"), {QStringLiteral("60")});
        QVERIFY(b->waitForStarted(5000));
        QFile f(runDir + QStringLiteral("/rank%1.a1.pid").arg(i));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray::number(b->processId()) + (i == 1 ? " 1\n" : "\n"));
        QVERIFY(f.flush());
        if (i == 2)
            QVERIFY(f.setFileTime(QDateTime(QDate(2020, 1, 1), QTime(0, 0), Qt::UTC),
                                  QFileDevice::FileModificationTime));
        f.close();
        bystanders.push_back(std::move(b));
    }
    auto lease = channel(SshRankScript::lease(s.tag, runDir, 1));
    lease->start();
    QVERIFY(lease->waitForStarted(5000));
    lease->write(".");
    QVERIFY(lease->waitForReadyRead(5000));
    QVERIFY(rank->waitForFinished(15000));
    QCOMPARE(rank->exitCode(), 128 + SIGTERM);
    QTRY_VERIFY_WITH_TIMEOUT(!processRuns(child), 5000);
    QVERIFY(lease->waitForFinished(15000)); // after its SIGKILL round, 5 s on
    QCOMPARE(lease->exitCode(), 0);
    for (const auto &b : bystanders) {
        QVERIFY2(b->state() == QProcess::Running, "the lease signalled a process that is no rank");
        b->kill();
        QVERIFY(b->waitForFinished(5000));
    }
    rank->closeWriteChannel();
    QVERIFY(wrapperGone(s.tag));
}

QTEST_GUILESS_MAIN(TestSshRankScript)
#include "tst_sshrankscript.moc"
