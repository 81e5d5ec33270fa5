// SPDX-License-Identifier: GPL-3.0-or-later
//
// rankdeck-cli fed what a new user, a typo or a hostile file gives it (issue #18's list), each
// tried the way a user would: export to device nodes, FIFOs, directories and a full disk;
// oversized profiles and hosts that are no hosts; run names with newlines, escape sequences and
// 10 kB, C1 controls and bidi overrides; a run whose run.json is garbage; a worker flag without
// its value at the end; a rank whose output and failure carry escape sequences, and one that
// writes a 1.5 GiB line (issue 29). Every one must end in a clear message naming the thing, lose
// nothing, never replace a device, and never let others' bytes act on the user's terminal.
#include "fiforeader.h"
#include "smalltmpfs.h"
#include "testprocesses.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

class TestHostileInput : public QObject
{
    Q_OBJECT

private:
    using Result = rankdeck::testing::CommandResult;

    QTemporaryDir m_home;
    QString m_cli;
    QString m_worker;
    QString m_seedRun; // a finished 1-rank run with metrics, made once
    QString m_seedProblem;

    Result cli(const QStringList &args, int timeoutMs = 120000)
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XDG_DATA_HOME"), m_home.path() + QStringLiteral("/data"));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), m_home.path() + QStringLiteral("/config"));
        env.insert(QStringLiteral("RANKDECK_WORKER"), m_worker);
        return rankdeck::testing::runCommand(m_cli, args, env, timeoutMs);
    }

    QString runsDir() const { return m_home.path() + QStringLiteral("/data/rankdeck/runs"); }
    QString profilesDir() const
    {
        return m_home.path() + QStringLiteral("/config/rankdeck/profiles");
    }

    void requireSeed()
    {
        if (!m_seedProblem.isEmpty())
            QSKIP(qPrintable(m_seedProblem));
    }

    static bool isCharDevice(const QString &path)
    {
        struct stat st = {};
        return ::stat(path.toLocal8Bit().constData(), &st) == 0 && S_ISCHR(st.st_mode);
    }

    // What must never reach a terminal from others' bytes: ESC (escape sequences), C1
    // controls (U+009B is CSI to some terminals) and the bidi overrides and isolates that
    // reorder what follows them. Empty when the text is clean, else what was found.
    static QString unsafeFor(const QString &text)
    {
        for (qsizetype i = 0; i < text.size(); ++i) {
            const ushort u = text[i].unicode();
            if (u == 0x1b || (u >= 0x80 && u <= 0x9f) || (u >= 0x202a && u <= 0x202e) ||
                (u >= 0x2066 && u <= 0x2069))
                return QStringLiteral("U+%1 at %2 in: %3")
                    .arg(u, 4, 16, QLatin1Char('0'))
                    .arg(i)
                    .arg(text.mid(qMax<qsizetype>(0, i - 60), 120));
        }
        return {};
    }

    // A copy of the seed run under another id, with run.json's name replaced.
    QString copyOfSeedNamed(const QString &id, const QString &name)
    {
        const QString from = runsDir() + QLatin1Char('/') + m_seedRun;
        const QString to = runsDir() + QLatin1Char('/') + id;
        QDir().mkpath(to);
        for (const QString &f : QDir(from).entryList(QDir::Files)) {
            if (!QFile::copy(from + QLatin1Char('/') + f, to + QLatin1Char('/') + f))
                return {};
        }
        QFile runJson(to + QStringLiteral("/run.json"));
        if (!runJson.open(QIODevice::ReadOnly))
            return {};
        QJsonObject o = QJsonDocument::fromJson(runJson.readAll()).object();
        runJson.close();
        o[QStringLiteral("id")] = id;
        o[QStringLiteral("name")] = name;
        if (!rankdeck::testing::writeFile(runJson.fileName(), QJsonDocument(o).toJson()))
            return {};
        return to;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_home.isValid());
        const QString bin = qEnvironmentVariable("RANKDECK_BIN_DIR");
        QVERIFY2(!bin.isEmpty(), "RANKDECK_BIN_DIR is not set (run through ctest)");
        m_cli = bin + QStringLiteral("/rankdeck-cli");
        m_worker =
            qEnvironmentVariable("RANKDECK_WORKER", bin + QStringLiteral("/rankdeck-worker"));
        QVERIFY2(QFileInfo(m_cli).isExecutable(), qPrintable(m_cli));
        if (!QFileInfo(m_worker).isExecutable()) {
            m_seedProblem = QStringLiteral("no worker at %1").arg(m_worker);
            return;
        }
        const Result r =
            cli({QStringLiteral("launch"), QStringLiteral("--nproc-per-node"), QStringLiteral("1"),
                 QStringLiteral("--name"), QStringLiteral("seed"), QStringLiteral("--"),
                 QStringLiteral("--task"), QStringLiteral("linear"), QStringLiteral("--steps"),
                 QStringLiteral("200")});
        static const QRegularExpression re(QStringLiteral("\\[rankdeck\\] run (\\S+) \\("));
        m_seedRun = re.match(r.err).captured(1);
        if (r.code != 0 || m_seedRun.isEmpty())
            m_seedProblem = QStringLiteral("the seed run failed: ") + r.err.right(2000);
    }

    void exportToDevices_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("/dev/null")
            << QStringLiteral("/dev/null") << 0 << QStringLiteral("points written to /dev/null");
        QTest::newRow("/dev/full")
            << QStringLiteral("/dev/full") << 1 << QStringLiteral("/dev/full");
    }
    void exportToDevices()
    {
        requireSeed();
        QFETCH(QString, target);
        QFETCH(int, code);
        QFETCH(QString, mentions);
        if (!isCharDevice(target))
            QSKIP(qPrintable(target + QStringLiteral(" is not a character device here")));
        const Result r =
            cli({QStringLiteral("export"), m_seedRun, QStringLiteral("--csv"), target});
        QCOMPARE(r.code, code);
        QVERIFY2(r.err.contains(mentions), qPrintable(r.err));
        if (code != 0)
            QVERIFY2(!r.err.contains(QStringLiteral("written")), qPrintable(r.err));
        QVERIFY2(isCharDevice(target), "the device was replaced by a file");
    }

    void exportToFifo()
    {
        requireSeed();
        QTemporaryDir dir;
        const QString fifo = dir.filePath(QStringLiteral("csv.pipe"));
        rankdeck::testing::FifoReader reader(fifo);
        QVERIFY(reader.isValid());
        const Result r = cli({QStringLiteral("export"), m_seedRun, QStringLiteral("--csv"), fifo});
        const QByteArray received = reader.wait();
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(received.startsWith("rank,metric,segment,step,wall_time_us,value\n"));
        QCOMPARE(received.count("\n0,loss,"), 200);
        QVERIFY(QFileInfo(fifo).exists() && !QFileInfo(fifo).isFile());
    }

    void exportToDirectoryIsRefused()
    {
        requireSeed();
        QTemporaryDir dir;
        const Result r =
            cli({QStringLiteral("export"), m_seedRun, QStringLiteral("--csv"), dir.path()});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(dir.path()) && r.err.contains(QStringLiteral("directory")),
                 qPrintable(r.err));
        QVERIFY(QFileInfo(dir.path()).isDir());
    }

    void exportToFullDisk_data()
    {
        QTest::addColumn<qint64>("leave");
        QTest::newRow("no byte left") << qint64(0);
        QTest::newRow("4 KiB left (the CSV needs more)") << qint64(4096);
    }
    void exportToFullDisk()
    {
        requireSeed();
        QFETCH(qint64, leave);
        rankdeck::testing::SmallTmpfs fs(1024 * 1024);
        if (!fs.isMounted())
            QSKIP(qPrintable(fs.problem()));
        const QString csv = fs.path() + QStringLiteral("/metrics.csv");
        QVERIFY(rankdeck::testing::writeFile(csv, "an older export\n"));
        QVERIFY(fs.fill(leave));
        const Result r = cli({QStringLiteral("export"), m_seedRun, QStringLiteral("--csv"), csv});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(csv), qPrintable(r.err));
        QVERIFY2(!r.err.contains(QStringLiteral("written to")), qPrintable(r.err));
        // The older file is untouched, and nothing half-written lies next to it.
        QCOMPARE(rankdeck::testing::fileLines(csv), QList<QByteArray>{"an older export"});
        QCOMPARE(QDir(fs.path()).entryList(QDir::Files),
                 (QStringList{QStringLiteral("filler"), QStringLiteral("metrics.csv")}));
    }

    void hostileRunNames_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("newline") << QStringLiteral("two\nlines");
        QTest::newRow("escape sequences") << QStringLiteral("\x1b[2J\x1b]0;owned\x07\x1b[31mred");
        QTest::newRow("10 kB") << QString(10240, QLatin1Char('n'));
        QTest::newRow("carriage return and tab") << QStringLiteral("abc\rXYZ\tq");
        // U+009B is a one-character CSI: "\u009b2J" clears the screen where C1 is honoured.
        QTest::newRow("C1 controls") << QStringLiteral("c1\u009b2J\u009d0;owned\u009c\u0085x");
        // "exe.txt" that shows as "txt.exe", and an isolate that is never closed.
        QTest::newRow("bidi overrides") << QStringLiteral(
            "run\u202etxt.exe\u202c \u2066isolated \u202a\u202b\u202d\u2067\u2068\u2069");
    }
    void hostileRunNames()
    {
        requireSeed();
        QFETCH(QString, name);
        const QString id = QStringLiteral("20990101-000000-hostile-%1")
                               .arg(QString::fromLatin1(QTest::currentDataTag()))
                               .replace(QLatin1Char(' '), QLatin1Char('-'));
        const QString dir = copyOfSeedNamed(id, name);
        QVERIFY(!dir.isEmpty());
        const Result runs = cli({QStringLiteral("runs")});
        QCOMPARE(runs.code, 0);
        const QStringList rows = runs.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        // Header, the seed and this run: one row each, the name cleaned and bounded.
        QCOMPARE(rows.size(), 3);
        const QStringList mine = rows.filter(id);
        QCOMPARE(mine.size(), 1);
        QVERIFY2(mine.first().size() < 200, qPrintable(mine.first().left(300)));
        const Result show = cli({QStringLiteral("show"), id});
        QCOMPARE(show.code, 0);
        for (const Result *r : {&runs, &show}) {
            QVERIFY2(!r->out.contains(QChar(0x1b)), "an escape sequence reached the terminal");
            QVERIFY2(unsafeFor(r->out).isEmpty(), qPrintable(unsafeFor(r->out)));
            QVERIFY(!r->out.contains(QLatin1Char('\r')));
            QVERIFY(!r->out.contains(QLatin1Char('\t')));
        }
        const QStringList nameLines =
            show.out.split(QLatin1Char('\n')).filter(QRegularExpression(QStringLiteral("^Name: ")));
        QCOMPARE(nameLines.size(), 1);
        QVERIFY2(nameLines.first().size() < 300, qPrintable(nameLines.first().left(400)));
        QVERIFY(show.out.contains(QStringLiteral("\nState: ")));
        QVERIFY(QDir(dir).removeRecursively());
    }

    // A rank's own bytes on every way to the terminal (issue 29, problem 4): a program that
    // writes a clipboard write (OSC 52), a title change, a C1 CSI and bidi overrides, then
    // fails with them in its exception; a stack dump that holds them too. launch, logs,
    // logs --follow, show and stacks --last show them harmless; logs --raw keeps them exactly.
    void hostileRankOutput()
    {
        requireSeed();
        const QString payload = QStringLiteral("\x1b]52;c;cm0gLXJmIH4K\x07"
                                               "clip \x1b]0;owned\x07title \x1bP1$qm\x1b\\dcs "
                                               "\u009b2Jc1 \u202etxt.exe\u202c \u2066iso");
        const QString code = QStringLiteral("import sys\n"
                                            "p = %1\n"
                                            "sys.stdout.write(p + '\\n')\n"
                                            "sys.stdout.write('no newline at the end ' + p)\n"
                                            "sys.stdout.flush()\n"
                                            "raise ValueError(p)\n")
                                 .arg(QStringLiteral("'") +
                                      QString(payload)
                                          .replace(QLatin1Char('\\'), QStringLiteral("\\\\"))
                                          .replace(QChar(0x1b), QStringLiteral("\\x1b"))
                                          .replace(QChar(0x07), QStringLiteral("\\x07"))
                                          .replace(QChar(0x9b), QStringLiteral("\\u009b"))
                                          .replace(QChar(0x202e), QStringLiteral("\\u202e"))
                                          .replace(QChar(0x202c), QStringLiteral("\\u202c"))
                                          .replace(QChar(0x2066), QStringLiteral("\\u2066")) +
                                      QStringLiteral("'"));
        const Result launch = cli(
            {QStringLiteral("launch"), QStringLiteral("--nproc-per-node"), QStringLiteral("1"),
             QStringLiteral("--name"), QStringLiteral("hostile-output"), QStringLiteral("--exec"),
             QStringLiteral("--"), QStringLiteral("python3"), QStringLiteral("-c"), code});
        QVERIFY2(launch.code != 0, qPrintable(launch.err));
        QVERIFY2(launch.out.contains(QStringLiteral("ValueError")), qPrintable(launch.out));
        static const QRegularExpression re(QStringLiteral("\\[rankdeck\\] run (\\S+) \\("));
        const QString id = re.match(launch.err).captured(1);
        QVERIFY2(!id.isEmpty(), qPrintable(launch.err));
        // Each as a user would run it; the follow ends because the run has.
        const QString dir = runsDir() + QLatin1Char('/') + id;
        {
            // The record's copy of the rank's stack dumps (what `stacks --last` and `show` read).
            QFile stacks(dir + QStringLiteral("/stacks-rank-0.txt"));
            QVERIFY(stacks.open(QIODevice::Append));
            stacks.write("=== 1700000000000000 (on request " + payload.toUtf8() + ")\nThread 1 \"" +
                         payload.toUtf8() + "\":\n  File \"" + payload.toUtf8() +
                         ".py\", line 1 in f\n");
        }
        const QList<QStringList> commands{{QStringLiteral("logs"), id},
                                          {QStringLiteral("logs"), id, QStringLiteral("--follow")},
                                          {QStringLiteral("logs"), id, QStringLiteral("--follow"),
                                           QStringLiteral("--rank"), QStringLiteral("0")},
                                          {QStringLiteral("show"), id},
                                          {QStringLiteral("stacks"), id, QStringLiteral("--last")}};
        QVERIFY2(unsafeFor(launch.out + launch.err).isEmpty(),
                 qPrintable(QStringLiteral("launch: ") + unsafeFor(launch.out + launch.err)));
        for (const QStringList &args : commands) {
            const Result r = cli(args);
            QVERIFY2(r.code == 0,
                     qPrintable(args.join(QLatin1Char(' ')) + QLatin1Char(' ') + r.err));
            QVERIFY2(r.out.contains(QStringLiteral("clip")) ||
                         args.first() == QLatin1String("stacks"),
                     qPrintable(r.out));
            QVERIFY2(unsafeFor(r.out + r.err).isEmpty(),
                     qPrintable(args.join(QLatin1Char(' ')) + QStringLiteral(": ") +
                                unsafeFor(r.out + r.err)));
        }
        // --raw: the bytes exactly, for a pipe that wants them.
        for (const QString &follow : {QString(), QStringLiteral("--follow")}) {
            QStringList args{QStringLiteral("logs"), id, QStringLiteral("--raw")};
            if (!follow.isEmpty())
                args << follow;
            const Result r = cli(args);
            QCOMPARE(r.code, 0);
            QVERIFY2(r.out.contains(QStringLiteral("[r0] ") + payload + QLatin1Char('\n')),
                     qPrintable(r.out.left(2000)));
        }
    }

    // A rank that writes a 1.5 GiB line without a newline (issue 29, problem 4): logs --follow
    // reads the file a chunk at a time and keeps only the line's head, so it prints the line cut
    // (with its full length) inside an address space far smaller than the line.
    void followLongLineInBoundedMemory()
    {
        requireSeed();
        const QString id = QStringLiteral("20990103-000000-longline");
        const QString dir = copyOfSeedNamed(id, QStringLiteral("longline"));
        QVERIFY(!dir.isEmpty());
        const qint64 extra = qint64(1536) * 1024 * 1024;
        QFile log(dir + QStringLiteral("/rank-0.log"));
        QVERIFY(log.open(QIODevice::ReadWrite));
        const qint64 before = log.size();
        QVERIFY(log.seek(before) && log.write("no newline: ") == 12);
        QVERIFY(log.resize(before + 12 + extra)); // sparse: NUL bytes that take no disk
        log.close();
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XDG_DATA_HOME"), m_home.path() + QStringLiteral("/data"));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), m_home.path() + QStringLiteral("/config"));
        // 1 GiB of address space: room for the CLI, none for the line.
        const Result r = rankdeck::testing::runCommand(
            QStringLiteral("/bin/sh"),
            {QStringLiteral("-c"), QStringLiteral("ulimit -v 1048576 && exec \"$0\" \"$@\""), m_cli,
             QStringLiteral("logs"), id, QStringLiteral("--follow"), QStringLiteral("--rank"),
             QStringLiteral("0")},
            env, 120000);
        QVERIFY2(r.code == 0,
                 qPrintable(QString::number(r.code) + QLatin1Char(' ') + r.err.right(2000)));
        const QStringList lines = r.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QVERIFY(!lines.isEmpty());
        QVERIFY2(lines.last().startsWith(QStringLiteral("no newline: \u2400\u2400")),
                 qPrintable(lines.last().left(100)));
        QVERIFY2(lines.last().endsWith(
                     QStringLiteral("%1 bytes in full in the run record]").arg(12 + extra)),
                 qPrintable(lines.last().right(200)));
        QVERIFY2(lines.last().size() < 20000, qPrintable(QString::number(lines.last().size())));
        QVERIFY(QDir(dir).removeRecursively());
    }

    // A long run's log whose oldest part is compressed beside it, made here as any tool would
    // (the zstd and fallocate commands, not RankDeck's own writer): `logs --follow` prints every
    // line in order from the segment and the file, and never the freed part's NULs.
    void followReadsACompressedPrefix()
    {
        requireSeed();
        const QString zstd = QStandardPaths::findExecutable(QStringLiteral("zstd"));
        const QString fallocate = QStandardPaths::findExecutable(QStringLiteral("fallocate"));
        if (zstd.isEmpty() || fallocate.isEmpty())
            QSKIP("no zstd or fallocate command here (scripts/bootstrap.sh installs zstd)");
        const QString id = QStringLiteral("20990104-000000-compressed");
        const QString dir = copyOfSeedNamed(id, QStringLiteral("compressed"));
        QVERIFY(!dir.isEmpty());
        const QString path = dir + QStringLiteral("/rank-0.log");
        constexpr int Added = 20000;
        {
            QFile log(path);
            QVERIFY(log.open(QIODevice::Append));
            for (int i = 0; i < Added; ++i)
                log.write("compressed line " + QByteArray::number(i) + '\n');
        }
        QFile log(path);
        QVERIFY(log.open(QIODevice::ReadOnly));
        const QByteArray whole = log.readAll();
        log.close();
        const qint64 cut = whole.indexOf('\n', 200000) + 1;
        QVERIFY(cut > 200000);
        QProcess pack;
        pack.setStandardOutputFile(path + QStringLiteral(".0-%1.zst").arg(cut));
        pack.start(zstd, {QStringLiteral("-q"), QStringLiteral("-c")});
        QVERIFY(pack.waitForStarted());
        pack.write(whole.left(cut));
        pack.closeWriteChannel();
        QVERIFY(pack.waitForFinished(30000) && pack.exitCode() == 0);
        QCOMPARE(
            QProcess::execute(fallocate, {QStringLiteral("--punch-hole"),
                                          QStringLiteral("--offset"), QStringLiteral("0"),
                                          QStringLiteral("--length"), QString::number(cut), path}),
            0);
        struct stat st = {};
        QVERIFY(::stat(QFile::encodeName(path).constData(), &st) == 0);
        QVERIFY2(st.st_blocks * 512 < whole.size() - 150000, "the prefix was not freed");
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XDG_DATA_HOME"), m_home.path() + QStringLiteral("/data"));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), m_home.path() + QStringLiteral("/config"));
        const Result r =
            rankdeck::testing::runCommand(m_cli,
                                          {QStringLiteral("logs"), id, QStringLiteral("--follow"),
                                           QStringLiteral("--rank"), QStringLiteral("0")},
                                          env, 120000);
        QVERIFY2(r.code == 0, qPrintable(r.err.right(2000)));
        QVERIFY2(!r.out.contains(QChar(0x2400)) && !r.out.contains(QChar(0)),
                 "the freed part's NULs were printed");
        const QStringList lines = r.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), whole.count('\n'));
        for (int i = 0; i < Added; ++i)
            QCOMPARE(lines[lines.size() - Added + i], QStringLiteral("compressed line %1").arg(i));
        QVERIFY(QDir(dir).removeRecursively());
    }

    void garbageRunJson_data()
    {
        QTest::addColumn<QByteArray>("runJson");
        QTest::addColumn<QString>("problem");
        QTest::newRow("garbage") << QByteArray("\x01\x02not json at all")
                                 << QStringLiteral("not JSON");
        QTest::newRow("cut") << QByteArray("{\"id\": \"x\", \"name\": \"cu")
                             << QStringLiteral("not JSON");
        QTest::newRow("empty (full disk)") << QByteArray() << QStringLiteral("not JSON");
        QTest::newRow("no id") << QByteArray("{\"name\": \"x\"}") << QStringLiteral("no run id");
        QTest::newRow("missing") << QByteArray("-") << QStringLiteral("missing");
    }
    void garbageRunJson()
    {
        requireSeed();
        QFETCH(QByteArray, runJson);
        QFETCH(QString, problem);
        const QString id = QStringLiteral("20990102-000000-broken");
        const QString dir = copyOfSeedNamed(id, QStringLiteral("broken"));
        QVERIFY(!dir.isEmpty());
        if (runJson == "-")
            QVERIFY(QFile::remove(dir + QStringLiteral("/run.json")));
        else
            QVERIFY(rankdeck::testing::writeFile(dir + QStringLiteral("/run.json"), runJson));
        Result r = cli({QStringLiteral("runs")});
        QCOMPARE(r.code, 0);
        const QStringList row = r.out.split(QLatin1Char('\n')).filter(id);
        QCOMPARE(row.size(), 1);
        QVERIFY2(row.first().contains(QStringLiteral("BROKEN")) && row.first().contains(problem),
                 qPrintable(row.first()));
        QVERIFY(r.out.contains(m_seedRun)); // the good run is still listed
        for (const QString &cmd : {QStringLiteral("show"), QStringLiteral("export")}) {
            const QString csv = m_home.path() + QStringLiteral("/broken.csv");
            QStringList args{cmd, id};
            if (cmd == QLatin1String("export"))
                args << QStringLiteral("--csv") << csv;
            r = cli(args);
            QCOMPARE(r.code, 1);
            QVERIFY2(r.err.contains(QStringLiteral("not a run record")) ||
                         r.err.contains(QStringLiteral("no run with id")),
                     qPrintable(r.err));
            QVERIFY(!QFile::exists(csv));
        }
        QVERIFY(QDir(dir).removeRecursively());
    }

    void oversizedProfile()
    {
        QByteArray text = "schema_version = 1\ntransport = \"ssh\"\n[[nodes]]\nhost = \"a\"\n";
        text += "# " + QByteArray(4 * 1024 * 1024, 'p') + "\n[[nodes]]\nhost = \"b\"\n";
        const QString path = profilesDir() + QStringLiteral("/huge.toml");
        QVERIFY(rankdeck::testing::writeFile(path, text));
        for (const QString &cmd : {QStringLiteral("check"), QStringLiteral("show")}) {
            QStringList args{QStringLiteral("profiles"), cmd, QStringLiteral("huge")};
            if (cmd == QLatin1String("check"))
                args.insert(2, QStringLiteral("--offline"));
            const Result r = cli(args);
            QCOMPARE(r.code, 1);
            QVERIFY2(r.err.contains(path) && r.err.contains(QStringLiteral("4 MiB")),
                     qPrintable(r.err));
            QVERIFY(!r.out.contains(QStringLiteral("file ok")));
        }
        QVERIFY(QFile::remove(path));
    }

    void hostsThatAreNoHosts_data()
    {
        QTest::addColumn<QByteArray>("host"); // as written in the TOML string
        QTest::addColumn<QString>("says");
        QTest::newRow(";") << QByteArray("gpu1;reboot") << QStringLiteral("';'");
        QTest::newRow("newline") << QByteArray("gpu1\\nProxyCommand x") << QStringLiteral("U+000a");
        QTest::newRow("leading -")
            << QByteArray("-oProxyCommand=touch /tmp/p") << QStringLiteral("starts with '-'");
        QTest::newRow("backquote") << QByteArray("`id`") << QStringLiteral("'`'");
    }
    void hostsThatAreNoHosts()
    {
        QFETCH(QByteArray, host);
        QFETCH(QString, says);
        const QString path = profilesDir() + QStringLiteral("/bad.toml");
        QVERIFY(rankdeck::testing::writeFile(
            path, "schema_version = 1\ntransport = \"ssh\"\n[[nodes]]\nhost = \"" + host + "\"\n"));
        for (const QStringList &args :
             {QStringList{QStringLiteral("profiles"), QStringLiteral("check"),
                          QStringLiteral("bad")},
              QStringList{QStringLiteral("launch"), QStringLiteral("--profile"),
                          QStringLiteral("bad"), QStringLiteral("--"), QStringLiteral("--steps"),
                          QStringLiteral("1")}}) {
            const Result r = cli(args, 60000);
            QVERIFY2(r.code == 1 || r.code == 2, qPrintable(r.err));
            QVERIFY2(!r.out.contains(QStringLiteral("file ok")), qPrintable(r.out));
            QVERIFY2(r.err.contains(path + QStringLiteral(":4: nodes[0].host: ")) &&
                         r.err.contains(says) && r.err.contains(QStringLiteral("profile \"bad\"")),
                     qPrintable(r.err));
            QVERIFY(!r.err.contains(QStringLiteral("Hostname required")));
            QVERIFY(!r.err.contains(QChar(0x1b)));
        }
        QVERIFY(QFile::remove(path));
    }

    void lastWorkerFlagWithoutValue_data()
    {
        QTest::addColumn<QStringList>("workerArgs");
        QTest::addColumn<QString>("flag");
        QTest::newRow("--steps") << QStringList{QStringLiteral("--task"), QStringLiteral("linear"),
                                                QStringLiteral("--steps")}
                                 << QStringLiteral("--steps");
        QTest::newRow("--lr") << QStringList{QStringLiteral("--lr")} << QStringLiteral("--lr");
    }
    void lastWorkerFlagWithoutValue()
    {
        requireSeed();
        QFETCH(QStringList, workerArgs);
        QFETCH(QString, flag);
        const Result r =
            cli(QStringList{QStringLiteral("launch"), QStringLiteral("--nproc-per-node"),
                            QStringLiteral("1"), QStringLiteral("--")} +
                workerArgs);
        QVERIFY(r.code != 0);
        const QString all = r.out + r.err;
        QVERIFY2(all.contains(flag + QStringLiteral(": missing value")), qPrintable(all));
        QVERIFY2(!all.contains(QStringLiteral("rendezvous-timeout")), qPrintable(all));
    }
};

QTEST_GUILESS_MAIN(TestHostileInput)
#include "tst_hostileinput.moc"
