// SPDX-License-Identifier: GPL-3.0-or-later
//
// The run record on a full disk, end to end through rankdeck-cli with the run directory on a
// small tmpfs of the test's own: a chatty run fills it up mid-run and must say so at once,
// naming the directory, stop cleanly, and leave a record that says how many bytes and lines of
// which rank it lacks (every line printed is either in the record or counted missing; `logs`
// claims no cut lines); a run started on a full disk fails with a clear message and leaves no
// empty directory behind. Skips, saying why, where a tmpfs cannot be mounted (not root).
#include "smalltmpfs.h"
#include "testprocesses.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

class TestFullDisk : public QObject
{
    Q_OBJECT

private:
    using Result = rankdeck::testing::CommandResult;

    QTemporaryDir m_config;
    QString m_cli;

    Result cli(const QString &dataHome, const QStringList &args, int timeoutMs = 120000)
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XDG_DATA_HOME"), dataHome);
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), m_config.path());
        return rankdeck::testing::runCommand(m_cli, args, env, timeoutMs);
    }

    static QJsonObject readJson(const QString &path)
    {
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly))
            return {};
        return QJsonDocument::fromJson(f.readAll()).object();
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_config.isValid());
        const QString bin = qEnvironmentVariable("RANKDECK_BIN_DIR");
        QVERIFY2(!bin.isEmpty(), "RANKDECK_BIN_DIR is not set (run through ctest)");
        m_cli = bin + QStringLiteral("/rankdeck-cli");
        QVERIFY2(QFileInfo(m_cli).isExecutable(), qPrintable(m_cli));
    }

    void chattyRunFillsTheDisk()
    {
        rankdeck::testing::SmallTmpfs fs(2 * 1024 * 1024);
        if (!fs.isMounted())
            QSKIP(qPrintable(fs.problem()));
        constexpr int kLines = 40000;
        // 40,000 lines of 47 bytes (1.9 MB of text, 3.1 MB with the index) on a 2 MB disk,
        // all of them printed whatever the stop (SIGTERM is ignored until the last one), then
        // the program waits to be stopped.
        const QString program =
            QStringLiteral("trap '' TERM INT; i=0; while [ $i -lt %1 ]; do "
                           "echo \"line $i xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"; i=$((i+1)); done; "
                           "trap - TERM INT; exec sleep 60")
                .arg(kLines);
        const Result r =
            cli(fs.path(),
                {QStringLiteral("launch"), QStringLiteral("--nproc-per-node"), QStringLiteral("1"),
                 QStringLiteral("--name"), QStringLiteral("chatty"), QStringLiteral("--quiet"),
                 QStringLiteral("--no-progress"), QStringLiteral("--exec"), QStringLiteral("--"),
                 QStringLiteral("sh"), QStringLiteral("-c"), program},
                90000);
        const QString runs = fs.path() + QStringLiteral("/rankdeck/runs");
        const QStringList dirs = QDir(runs).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
        QCOMPARE(dirs.size(), 1);
        const QString dir = runs + QLatin1Char('/') + dirs.first();
        // Said at once, naming the directory; the run failed, not "finished".
        QVERIFY2(r.code != 0, qPrintable(r.err.right(3000)));
        QVERIFY2(r.err.contains(QStringLiteral("cannot be written")) && r.err.contains(dir),
                 qPrintable(r.err.right(3000)));
        QVERIFY2(r.out.contains(QStringLiteral("missing from the record")) ||
                     r.err.contains(QStringLiteral("missing from the record")),
                 qPrintable(r.out.right(3000)));
        // It took the stop, not the sleep, to end it.
        QVERIFY2(!r.err.contains(QStringLiteral("timed out")), qPrintable(r.err.right(2000)));

        // state.json is whole and says what is missing.
        const QJsonObject state = readJson(dir + QStringLiteral("/state.json"));
        QCOMPARE(state.value(QStringLiteral("state")).toString(), QStringLiteral("failed"));
        const QJsonObject record = state.value(QStringLiteral("record_incomplete")).toObject();
        QVERIFY2(record.value(QStringLiteral("problem")).toString().contains(dir),
                 QJsonDocument(state).toJson().constData());
        const QJsonArray missing = record.value(QStringLiteral("missing")).toArray();
        QCOMPARE(missing.size(), 1);
        QCOMPARE(missing.at(0).toObject().value(QStringLiteral("rank")).toInt(), 0);
        const qint64 missingBytes =
            missing.at(0).toObject().value(QStringLiteral("bytes")).toInteger();
        const qint64 missingLines =
            missing.at(0).toObject().value(QStringLiteral("lines")).toInteger();
        QVERIFY(missingBytes > 0 && missingLines > 0);

        // Every line is in the record, in order and whole, or counted missing: none dropped
        // silently.
        const QList<QByteArray> recorded =
            rankdeck::testing::fileLines(dir + QStringLiteral("/rank-0.log"));
        qint64 programLines = 0;
        for (const QByteArray &l : recorded) {
            if (!l.startsWith("line "))
                continue;
            QCOMPARE(l, QByteArray("line ") + QByteArray::number(programLines) +
                            " xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
            ++programLines;
        }
        QVERIFY2(programLines > 1000 && programLines < kLines,
                 qPrintable(QString::number(programLines)));
        // The supervisor may add a line of its own while stopping (it is counted too).
        QVERIFY2(
            programLines + missingLines >= kLines && programLines + missingLines <= kLines + 5,
            qPrintable(
                QStringLiteral("%1 recorded + %2 missing").arg(programLines).arg(missingLines)));
        qDebug("recorded %lld of %d lines; %lld lines (%lld bytes) counted missing", programLines,
               kLines, missingLines, missingBytes);

        // Reading the record back claims no cut lines and shows exactly what it holds; show
        // names what is missing.
        Result logs = cli(fs.path(), {QStringLiteral("logs"), dirs.first(),
                                      QStringLiteral("--rank"), QStringLiteral("0")});
        QCOMPARE(logs.code, 0);
        QVERIFY(!logs.out.contains(QStringLiteral("line cut")));
        QCOMPARE(logs.out.count(QLatin1Char('\n')), recorded.size());
        Result show = cli(fs.path(), {QStringLiteral("show"), dirs.first()});
        QCOMPARE(show.code, 0);
        QVERIFY2(show.out.contains(QStringLiteral("rank 0: %1 bytes").arg(missingBytes)),
                 qPrintable(show.out));
        Result list = cli(fs.path(), {QStringLiteral("runs")});
        QVERIFY(list.out.contains(dirs.first()));
        QVERIFY(rankdeck::testing::processesMatching(QStringLiteral("line $i xxxx")).isEmpty());
    }

    void runStartedOnAFullDisk()
    {
        rankdeck::testing::SmallTmpfs fs(1024 * 1024);
        if (!fs.isMounted())
            QSKIP(qPrintable(fs.problem()));
        const QString runs = fs.path() + QStringLiteral("/rankdeck/runs");
        QVERIFY(QDir().mkpath(runs));
        QVERIFY(fs.fill());
        const Result r =
            cli(fs.path(),
                {QStringLiteral("launch"), QStringLiteral("--nproc-per-node"), QStringLiteral("1"),
                 QStringLiteral("--exec"), QStringLiteral("--"), QStringLiteral("true")});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(runs) && r.err.contains(QStringLiteral("No space left")),
                 qPrintable(r.err));
        // No empty run directory, no 0-byte run.json left behind to list as broken.
        QCOMPARE(QDir(runs).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), QStringList());
        const Result list = cli(fs.path(), {QStringLiteral("runs")});
        QCOMPARE(list.code, 0);
        QVERIFY(!list.out.contains(QStringLiteral("BROKEN")));
    }
};

QTEST_GUILESS_MAIN(TestFullDisk)
#include "tst_fulldisk.moc"
