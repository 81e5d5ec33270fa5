// SPDX-License-Identifier: GPL-3.0-or-later
//
// The frameworks people train with, unmodified, under `rankdeck-cli launch --exec` (issue 27):
// Lightning 2.6 (Trainer(strategy="ddp")), Accelerate 1.15 (an Accelerator loop), Transformers
// 5.24 (Trainer on a tiny GPT-2 built from a config) and a torchrun-style DDP script whose
// DataLoader uses 2 workers; each on 2 local ranks and on 2 sshd nodes × 1 rank. The scripts
// (tests/cli/programs/frameworks/) are written as each framework's users write them, tiny
// models and a few steps, and append every line they print to printed-rank<R>.txt. Per run:
//   - clean: it finishes (exit 0, every rank finished); every line each rank printed is in that
//     rank's record, in order; every printed or logged metric has per-rank points whose x never
//     steps back (one segment, strictly increasing), each rank's own metric one point per
//     printed line;
//   - a KeyError on rank 1: rank 1 is the root cause, with KeyError and the script's line; the
//     other rank's status is its real one (never "exit code 0");
//   - the same KeyError on every rank: one entry, the other "same traceback as rank R above";
//   - a Dataset that segfaults in a DataLoader worker of rank 1: SIGSEGV, the worker's pid and
//     role, the Dataset's line, rank 1 the root cause;
// and no process of the run is left. One test function per framework (ctest runs each apart:
// tst_frameworks_<function>).
#include "config/profile.h"
#include "config/profilestore.h"
#include "fixtureprofile.h"
#include "sshfixture.h"
#include "testprocesses.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace rankdeck;

namespace {

struct Framework
{
    QString tag;             // in run names (a run id keeps 24 characters of its name)
    QString script;          // in tests/cli/programs/frameworks/
    QString modules;         // what its Python needs
    QString perRankMetric;   // printed by every rank: one point per printed line with it
    QStringList rank0Logged; // what the framework itself shows on rank 0 (bar, dicts, prints)
};

const QMap<QString, Framework> &frameworks()
{
    static const QMap<QString, Framework> all{
        {u"lightning"_s,
         {u"lt"_s,
          u"lightning_module.py"_s,
          u"lightning"_s,
          u"batch_loss"_s,
          {u"train_loss"_s, u"val_loss"_s}}},
        {u"accelerate"_s,
         {u"acc"_s,
          u"accelerate_loop.py"_s,
          u"accelerate, tqdm"_s,
          u"mean_loss"_s,
          {u"loss"_s, u"train_loss"_s}}},
        {u"transformers"_s,
         {u"tf"_s,
          u"transformers_gpt2.py"_s,
          u"transformers"_s,
          u"batch_loss"_s,
          {u"loss"_s, u"grad_norm"_s, u"eval_loss"_s}}},
        {u"torchrunDataLoader"_s,
         {u"ddp"_s, u"torchrun_dataloader.py"_s, u"torch"_s, u"batch_loss"_s, {}}},
    };
    return all;
}

struct Point
{
    int segment = 0;
    qint64 step = 0;
};

// metrics.csv: (rank, metric) → its points in order.
QMap<QPair<int, QString>, QList<Point>> readMetrics(const QString &runDir)
{
    QMap<QPair<int, QString>, QList<Point>> out;
    QFile f(runDir + u"/metrics.csv"_s);
    if (!f.open(QIODevice::ReadOnly))
        return out;
    for (const QByteArray &line : f.readAll().split('\n')) {
        const QList<QByteArray> c = line.split(','); // no metric here has a comma
        if (c.size() != 6 || c[0] == "rank")
            continue;
        out[{c[0].toInt(), QString::fromUtf8(c[1])}].append({c[2].toInt(), c[3].toLongLong()});
    }
    return out;
}

QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QByteArray lastLines(const QString &path, int n)
{
    const QList<QByteArray> lines = readFile(path).split('\n');
    return lines.mid(qMax<qsizetype>(0, lines.size() - n)).join('\n');
}

// torch 2.14.1 sometimes aborts a rank at exit, after its training (issue 27, defect 11: seen
// once in about 20 runs when the issue was filed; 0 in 379 RankDeck and 0 in 245 torchrun runs
// of the DDP tutorial script since, docs/crash-reports.md): the program's crash, not this
// test's subject.
const QString kAbortAtExit = u"terminate called without an active exception"_s;

} // namespace

class TestFrameworks : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void lightning_data() { matrix(); }
    void lightning() { run(u"lightning"_s); }
    void accelerate_data() { matrix(); }
    void accelerate() { run(u"accelerate"_s); }
    void transformers_data() { matrix(); }
    void transformers() { run(u"transformers"_s); }
    void torchrunDataLoader_data() { matrix(); }
    void torchrunDataLoader() { run(u"torchrunDataLoader"_s); }

private:
    using Result = testing::CommandResult;

    static void matrix();
    void run(const QString &framework);
    void checkClean(const Framework &fw, const QString &dir, const QString &work, int ranks,
                    const Result &r);
    void checkKeyError(const QString &script, const QString &dir, const Result &r);
    void checkKeyErrorEverywhere(const QString &script, const QString &dir, const Result &r);
    void checkWorkerSegfault(const QString &script, const QString &dir, const Result &r);
    void checkRecord(const Framework &fw, const QString &dir, const QString &work, int ranks,
                     bool clean);

    Result cli(const QStringList &args, int timeoutMs = 280000) const
    {
        return testing::runCommand(m_cli, args, QProcessEnvironment::systemEnvironment(),
                                   timeoutMs);
    }
    QString runDirectory(const QString &name) const
    {
        const QStringList dirs = QDir(m_runsDir).entryList({u"*-"_s + name + u"-*"_s}, QDir::Dirs);
        return dirs.size() == 1 ? m_runsDir + u'/' + dirs.first() : QString();
    }
    static QJsonArray failures(const QString &dir)
    {
        return QJsonDocument::fromJson(readFile(dir + u"/failure.json"_s))
            .object()
            .value(u"failures"_s)
            .toArray();
    }
    // A failure without its tracebacks and stacks (QtTest cuts a long message), its exception
    // chain as "Type: message" lines: what a failing check says.
    static QByteArray brief(const QJsonObject &failure)
    {
        QJsonObject b = failure;
        for (const QString &key : {u"python"_s, u"python_dump"_s, u"stack"_s})
            b.remove(key);
        QJsonArray chain;
        for (const QJsonValue &e : failure.value(u"python"_s).toArray())
            chain.append(e.toObject().value(u"type"_s).toString() + u": "_s +
                         e.toObject().value(u"message"_s).toString().left(160));
        b.insert(u"python"_s, chain);
        b.insert(u"message"_s, failure.value(u"message"_s).toString().left(160));
        b.insert(u"has_python_dump"_s, failure.contains(u"python_dump"_s));
        return QJsonDocument(b).toJson(QJsonDocument::Compact);
    }
    static QByteArray brief(const QJsonArray &all)
    {
        QByteArray out;
        for (const QJsonValue &f : all)
            out += brief(f.toObject()) + '\n';
        return out;
    }
    // The line of the script that ends with "# FAULT: <what>".
    static int faultLine(const QString &script, const QString &what)
    {
        const QList<QByteArray> lines = readFile(script).split('\n');
        for (qsizetype i = 0; i < lines.size(); ++i)
            if (lines[i].trimmed().endsWith("# FAULT: " + what.toUtf8()))
                return int(i) + 1;
        return -1;
    }
    Result show(const QString &dir) const { return cli({u"show"_s, QFileInfo(dir).fileName()}); }

    SshFixture m_ssh;
    QString m_sshWhy;
    QTemporaryDir m_tmp;
    QString m_cli;
    QString m_python;
    QString m_programs;
    QString m_runsDir;
    QMap<QString, QString> m_missing; // framework → why its Python lacks it
    QString m_pythonVersion;          // "3.11.7"
    bool m_forkCanDeadlock = true;    // CPython before 3.11.10: gh-112275 (below)
};

void TestFrameworks::initTestCase()
{
    m_python = qEnvironmentVariable("RANKDECK_TORCH_PYTHON");
    if (m_python.isEmpty() || !QFileInfo(m_python).isExecutable())
        QSKIP("no torch Python (RANKDECK_TORCH_PYTHON): scripts/bootstrap.sh creates it");
    m_cli = qEnvironmentVariable("RANKDECK_BIN_DIR") + u"/rankdeck-cli"_s;
    QVERIFY(QFileInfo(m_cli).isExecutable());
    m_programs = qEnvironmentVariable("RANKDECK_SOURCE_DIR") + u"/tests/cli/programs/frameworks/"_s;
    QVERIFY(m_tmp.isValid());
    QVERIFY(testing::isolateUserDirectories(m_tmp.path()));
    m_runsDir = m_tmp.filePath(u"XDG_DATA_HOME/rankdeck/runs"_s);
    for (auto it = frameworks().cbegin(); it != frameworks().cend(); ++it) {
        const Result probe = testing::runCommand(m_python, {u"-c"_s, u"import "_s + it->modules},
                                                 QProcessEnvironment::systemEnvironment(), 120000);
        if (probe.code != 0)
            m_missing.insert(
                it.key(),
                u"the torch Python lacks %1 (issue 27: the bootstrap pins "
                "lightning 2.6.6, accelerate 1.15.0, transformers 5.24.0)"_s.arg(it->modules));
    }
    const Result version = testing::runCommand(
        m_python,
        {u"-c"_s,
         u"import sys; v = sys.version_info; print('%d.%d.%d' % v[:3], int(v >= (3, 11, 10)))"_s},
        QProcessEnvironment::systemEnvironment(), 120000);
    m_pythonVersion = version.out.section(QLatin1Char(' '), 0, 0).trimmed();
    m_forkCanDeadlock = version.out.section(QLatin1Char(' '), 1, 1).trimmed() != u"1"_s;
    m_sshWhy = SshFixture::unavailableReason();
    if (m_sshWhy.isEmpty() && !m_ssh.start(2))
        m_sshWhy = u"sshd fixture: "_s + m_ssh.lastError();
    if (m_sshWhy.isEmpty()) {
        Profile p = testing::fixtureProfile(m_ssh, u"sshpair"_s, 2, 1);
        p.connectTimeoutSec = 5;
        p.rendezvousTimeoutSec = 120;
        p.heartbeatTimeoutSec = 60;
        QString error;
        QVERIFY2(ProfileStore().save(p, true, &error), qPrintable(error));
    }
}

void TestFrameworks::matrix()
{
    QTest::addColumn<QString>("profile");
    QTest::addColumn<QString>("inject");
    for (const QString &profile : {u"local"_s, u"ssh"_s}) {
        for (const QString &inject : {u"none"_s, u"keyerror"_s, u"keyerror-all"_s, u"workersegv"_s})
            QTest::addRow("%s %s", qPrintable(profile), qPrintable(inject)) << profile << inject;
    }
}

void TestFrameworks::run(const QString &framework)
{
    QFETCH(QString, profile);
    QFETCH(QString, inject);
    if (m_missing.contains(framework))
        QSKIP(qPrintable(m_missing.value(framework)));
    if (profile == u"ssh"_s && !m_sshWhy.isEmpty())
        QSKIP(qPrintable(m_sshWhy));
    // In one of the two runs of this row with its fixes, rank 1's DataLoader worker hung before the
    // Dataset: gdb showed it inside CPython's own fork handling (PyOS_AfterFork_Child ->
    // _PyThreadState_DeleteExcept, waiting on a lock). That is CPython gh-112275: before 3.11.10
    // the child takes the runtime's HEAD_LOCK before re-initialising it, so a fork while another
    // thread of the rank (Lightning's, torch's) held it leaves the worker waiting for ever.
    // RankDeck flagged the run hung, as it should, but the row then runs into QtTest's 300 s
    // limit: with such an interpreter it runs on request only.
    if (framework == u"lightning"_s && inject == u"workersegv"_s && m_forkCanDeadlock &&
        qEnvironmentVariableIsEmpty("RANKDECK_FRAMEWORK_LIGHTNING_WORKERSEGV"))
        QSKIP(qPrintable(
            u"the torch Python is %1, whose fork can deadlock a DataLoader worker "
            "(CPython gh-112275, fixed in 3.11.10): set "
            "RANKDECK_FRAMEWORK_LIGHTNING_WORKERSEGV=1 to run it anyway"_s.arg(m_pythonVersion)));
    const Framework &fw = frameworks().value(framework);
    const QString script = m_programs + fw.script;
    // No name the start of another's: the run directory is found by "*-<name>-*".
    static const QMap<QString, QString> injected{{u"none"_s, u"clean"_s},
                                                 {u"keyerror"_s, u"keyerr1"_s},
                                                 {u"keyerror-all"_s, u"keyerrall"_s},
                                                 {u"workersegv"_s, u"wsegv"_s}};
    const QString name = fw.tag + u'-' + profile + u'-' + injected.value(inject);
    // Absolute, so that the ssh nodes (this machine) write their ranks' files there too.
    const QString work = m_tmp.filePath(u"work/"_s + name);
    QVERIFY(QDir().mkpath(work));
    QStringList args{u"launch"_s,        u"--name"_s,    name, u"--quiet"_s,
                     u"--no-progress"_s, u"--workdir"_s, work};
    if (profile == u"local"_s)
        args << u"--profile"_s << u"local"_s << u"--nproc-per-node"_s << u"2"_s;
    else
        args << u"--profile"_s << u"sshpair"_s << u"--accept-new-host-keys"_s;
    args << u"--exec"_s << u"--"_s << m_python << script << u"--inject"_s << inject
         << u"--fail-rank"_s << u"1"_s;
    const Result r = cli(args);
    const QString dir = runDirectory(name);
    QVERIFY2(!dir.isEmpty(), qPrintable(r.out + r.err));

    if (inject == u"none"_s)
        checkClean(fw, dir, work, 2, r);
    else if (inject == u"keyerror"_s)
        checkKeyError(script, dir, r);
    else if (inject == u"keyerror-all"_s)
        checkKeyErrorEverywhere(script, dir, r);
    else
        checkWorkerSegfault(script, dir, r);
    if (QTest::currentTestFailed())
        return;
    checkRecord(fw, dir, work, 2, inject == u"none"_s);
    if (QTest::currentTestFailed())
        return;
    const QString id = QFileInfo(dir).fileName();
    QVERIFY2(QTest::qWaitFor([&] { return testing::processesOfRun(id).isEmpty(); }, 15000),
             qPrintable(testing::processesOfRun(id).join(u", "_s)));
}

void TestFrameworks::checkClean(const Framework &fw, const QString &dir, const QString &work,
                                int ranks, const Result &r)
{
    const QString shown = show(dir).out;
    if (r.code != 0 && (readFile(dir + u"/rank-0.log"_s) + readFile(dir + u"/rank-1.log"_s))
                           .contains(kAbortAtExit.toUtf8())) {
        // Only the exit status is left unchecked, and only when training was through.
        for (int rank = 0; rank < ranks; ++rank)
            QVERIFY2(readFile(work + u"/printed-rank%1.txt"_s.arg(rank))
                         .contains("rank " + QByteArray::number(rank) + " done"),
                     qPrintable(shown));
        qWarning("torch aborted a rank at exit (\"%s\"); its exit status is not checked",
                 qPrintable(kAbortAtExit));
        return;
    }
    QVERIFY2(r.code == 0,
             qPrintable(u"exit %1\n%2\n%3"_s.arg(r.code).arg(shown, r.err.right(3000))));
    for (int rank = 0; rank < ranks; ++rank) {
        const QRegularExpression finished(u"\\n\\s*rank\\s+%1\\s.*\\bfinished\\b"_s.arg(rank));
        QVERIFY2(finished.match(shown).hasMatch(), qPrintable(shown));
    }
    QVERIFY2(failures(dir).isEmpty(), readFile(dir + u"/failure.json"_s).constData());
    // The framework's own metrics on rank 0.
    const auto metrics = readMetrics(dir);
    QStringList names;
    for (const auto &key : metrics.keys())
        names << u"%1:%2"_s.arg(key.first).arg(key.second);
    for (const QString &name : fw.rank0Logged)
        QVERIFY2(!metrics.value({0, name}).isEmpty(),
                 qPrintable(u"rank 0 has no %1 (%2)"_s.arg(name, names.join(u", "_s))));
}

void TestFrameworks::checkKeyError(const QString &script, const QString &dir, const Result &r)
{
    QCOMPARE(r.code, 1);
    const QJsonArray all = failures(dir);
    QVERIFY2(!all.isEmpty(), qPrintable(r.out));
    const QJsonObject root = all.first().toObject();
    QVERIFY2(root.value(u"root_cause"_s).toBool(), qPrintable(r.out));
    QCOMPARE(root.value(u"rank"_s).toInt(), 1);
    QCOMPARE(root.value(u"exception"_s).toString(), u"KeyError"_s);
    const QString shown = show(dir).out;
    QVERIFY2(shown.contains(u"Root cause (first failure): rank 1"_s), qPrintable(shown));
    const QRegularExpression where(
        u"%1\", line %2\\b"_s.arg(QRegularExpression::escape(QFileInfo(script).fileName()))
            .arg(faultLine(script, u"keyerror"_s)));
    QVERIFY2(where.match(shown).hasMatch(), qPrintable(shown));
    // Rank 0: whatever ended it (the stop's SIGTERM, its own error when rank 1's connection
    // went), never a clean exit it did not have.
    for (const QJsonValue &v : all) {
        const QJsonObject f = v.toObject();
        if (f.value(u"rank"_s).toInt() != 0)
            continue;
        QVERIFY(!f.value(u"root_cause"_s).toBool());
        QVERIFY2(f.value(u"signal"_s).toInt() != 0 || f.value(u"exit_code"_s).toInt() != 0,
                 QJsonDocument(f).toJson().constData());
    }
    QVERIFY2(!shown.contains(u"exit code 0"_s), qPrintable(shown));
}

void TestFrameworks::checkKeyErrorEverywhere(const QString &script, const QString &dir,
                                             const Result &r)
{
    QCOMPARE(r.code, 1);
    const QJsonArray all = failures(dir);
    QCOMPARE(all.size(), 2);
    int rootRank = -1;
    for (const QJsonValue &v : all) {
        const QJsonObject f = v.toObject();
        QVERIFY2(f.value(u"exception"_s).toString() == u"KeyError"_s, brief(f).constData());
        if (f.value(u"root_cause"_s).toBool())
            rootRank = f.value(u"rank"_s).toInt();
    }
    QVERIFY(rootRank == 0 || rootRank == 1);
    const QString shown = show(dir).out;
    const QRegularExpression same(u"\\n  rank %1 \\(local rank \\d+\\) on [^,]+, [^:]+: same "
                                  u"traceback as rank %2 above"_s.arg(1 - rootRank)
                                      .arg(rootRank));
    QVERIFY2(same.match(shown).hasMatch(), qPrintable(shown));
    // The traceback once: its faulting line is not repeated for the other rank.
    const QString where =
        u"%1\", line %2"_s.arg(QFileInfo(script).fileName()).arg(faultLine(script, u"keyerror"_s));
    QVERIFY2(shown.count(where) == 1, qPrintable(shown));
}

void TestFrameworks::checkWorkerSegfault(const QString &script, const QString &dir, const Result &r)
{
    QCOMPARE(r.code, 1);
    const QJsonArray all = failures(dir);
    QVERIFY2(!all.isEmpty(), qPrintable(r.out));
    const QJsonObject root = all.first().toObject();
    QVERIFY2(root.value(u"root_cause"_s).toBool(), qPrintable(r.out));
    QCOMPARE(root.value(u"rank"_s).toInt(), 1);
    const QJsonObject child = root.value(u"child"_s).toObject();
    // torch tells the rank of its worker's death in ways that depend on timing: what the rank
    // printed last says which way this run took. A line each, so that a log folding long lines
    // keeps them.
    if (child.value(u"signal_name"_s).toString() != u"SIGSEGV"_s) {
        for (const QByteArray &line : brief(all).split('\n'))
            qWarning("failure: %s", line.left(400).constData());
        const QByteArray log = readFile(dir + u"/rank-1.log"_s);
        for (const QByteArray &line : lastLines(dir + u"/rank-1.log"_s, 60).split('\n'))
            qWarning("rank 1 printed: %s", line.left(300).constData());
        // Once in CI (transformers, local, under load) rank 1 exited 1 and its report had no
        // traceback; whether its record had the worker's dump was not shown then. With neither
        // in the record nothing names the worker, which is the program's silence, not a report
        // that lost it.
        if (!log.contains("Traceback (most recent call last)") &&
            !log.contains("Fatal Python error")) {
            QVERIFY(root.value(u"exit_code"_s).toInt() != 0 || root.value(u"signal"_s).toInt());
            QSKIP("rank 1 printed neither a traceback nor its DataLoader worker's dump");
        }
    }
    QCOMPARE(child.value(u"signal_name"_s).toString(), u"SIGSEGV"_s);
    QCOMPARE(child.value(u"role"_s).toString(), u"DataLoader worker"_s);
    // torch names the worker's pid when its SIGCHLD handler ran before the rank tripped over
    // the dead worker; otherwise only the worker's own dump tells (tst_pythonfailurescanner).
    const qint64 pid = child.value(u"pid"_s).toInteger();
    const QString worker =
        pid > 0 ? u"DataLoader worker (pid %1)"_s.arg(pid) : u"a DataLoader worker"_s;
    const QString shown = show(dir).out;
    QVERIFY2(shown.contains(u"Root cause (first failure): rank 1"_s), qPrintable(shown));
    QVERIFY2(shown.contains(u"SIGSEGV (signal 11) in %1 of rank 1"_s.arg(worker)),
             qPrintable(shown));
    const QRegularExpression dataset(
        u"→ File \"[^\"]*%1\", line %2 in __getitem__"_s
            .arg(QRegularExpression::escape(QFileInfo(script).fileName()))
            .arg(faultLine(script, u"workersegv"_s)));
    QVERIFY2(dataset.match(shown).hasMatch(), qPrintable(shown));
}

void TestFrameworks::checkRecord(const Framework &fw, const QString &dir, const QString &work,
                                 int ranks, bool clean)
{
    const auto metrics = readMetrics(dir);
    for (int rank = 0; rank < ranks; ++rank) {
        // Every line the rank printed, in order, in its record (a bar's row may precede one).
        const QByteArray record = readFile(dir + u"/rank-%1.log"_s.arg(rank));
        const QList<QByteArray> printed =
            readFile(work + u"/printed-rank%1.txt"_s.arg(rank)).split('\n');
        qsizetype at = 0;
        int lines = 0;
        int withMetric = 0;
        for (const QByteArray &line : printed) {
            if (line.isEmpty())
                continue;
            ++lines;
            withMetric += line.contains(fw.perRankMetric.toUtf8() + '=') ? 1 : 0;
            const qsizetype found = record.indexOf(line, at);
            QVERIFY2(found >= 0, qPrintable(u"rank %1: \"%2\" is not in its record (after byte "
                                            "%3)"_s.arg(rank)
                                                .arg(QString::fromUtf8(line))
                                                .arg(at)));
            at = found + line.size();
        }
        // A failing run may end a rank before its first line (a worker's crash on prefetch).
        QVERIFY2(lines > 0 || !clean, qPrintable(u"rank %1 printed nothing"_s.arg(rank)));
        // Its own metric: a point per printed line that has it. The scripts print a line before
        // they append it to their file, so a rank ended by a peer's failure may have been killed
        // between the two: its record then holds one line, with its point, the file never got.
        const qsizetype points = metrics.value({rank, fw.perRankMetric}).size();
        if (clean || points != withMetric + 1)
            QCOMPARE(points, withMetric);
    }
    // x never steps back, in any series of what was printed (a TensorBoard file's steps are
    // the program's: Lightning logs its epoch at one step twice).
    for (auto it = metrics.cbegin(); it != metrics.cend(); ++it) {
        if (it.key().second.startsWith(u"tb/"_s))
            continue;
        for (qsizetype i = 0; i < it->size(); ++i)
            QVERIFY2(
                (*it)[i].segment == 0 && (i == 0 || (*it)[i].step > (*it)[i - 1].step),
                qPrintable(u"rank %1 %2 goes back at its point %3 (step %4)"_s.arg(it.key().first)
                               .arg(it.key().second)
                               .arg(i)
                               .arg((*it)[i].step)));
    }
}

QTEST_GUILESS_MAIN(TestFrameworks)
#include "tst_frameworks.moc"
