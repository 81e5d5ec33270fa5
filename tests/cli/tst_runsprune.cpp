// SPDX-License-Identifier: GPL-3.0-or-later
//
// `rankdeck-cli runs` says what each run holds on disk, and `runs prune` deletes by age or count:
// a dry run only lists, a run that may still be going is never deleted, and what was freed is
// said. The records are written here through RunRecord, as the launcher writes them.
#include "testprocesses.h"

#include "config/profile.h"
#include "config/syncmanifest.h"
#include "config/trainingconfig.h"
#include "record/runprune.h"
#include "record/runrecord.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;

class TestRunsPrune : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_home;
    QString m_cli;

    testing::CommandResult cli(const QStringList &args)
    {
        return testing::runCommand(m_cli, args, testing::cliEnvironment(m_home.path()), 60000);
    }
    QString runsDir() const { return m_home.path() + u"/data/rankdeck/runs"_s; }

    // A run started `daysAgo` days ago, in `state`, with a log of `bytes` bytes.
    QString writeRun(const QString &id, int daysAgo, const QJsonObject &state, int bytes)
    {
        RunRecord record;
        QString error;
        TrainingConfig config;
        config.name = id;
        if (!record.create(runsDir(), id, id, Profile::builtinLocal(2), config, &error) ||
            !record.writeState(state, &error)) {
            qWarning("%s", qPrintable(error));
            return {};
        }
        // Started earlier than now: run.json's created_us, as a launcher days ago wrote it.
        QFile runJson(record.directory() + u"/run.json"_s);
        if (!runJson.open(QIODevice::ReadOnly))
            return {};
        QJsonObject run = QJsonDocument::fromJson(runJson.readAll()).object();
        runJson.close();
        run[u"created_us"_s] = run.value(u"created_us"_s).toInteger() - daysAgo * 86'400'000'000;
        testing::writeFile(runJson.fileName(), QJsonDocument(run).toJson());
        testing::writeFile(record.directory() + u"/rank-0.log"_s, QByteArray(bytes, 'x'));
        return record.directory();
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_home.isValid());
        m_cli = qEnvironmentVariable("RANKDECK_BIN_DIR") + u"/rankdeck-cli"_s;
        QVERIFY2(QFileInfo::exists(m_cli), qPrintable(m_cli));
    }

    void pruneByAgeAndCount()
    {
        const QJsonObject finished{{u"state"_s, u"finished"_s}};
        const QString fresh = writeRun(u"fresh"_s, 0, finished, 1000);
        const QString old = writeRun(u"old"_s, 10, finished, 3 * 1024 * 1024);
        const QString older = writeRun(u"older"_s, 20, finished, 1024 * 1024);
        // Running 30 days, its launcher (this test) alive: never pruned.
        const QString running = writeRun(
            u"running"_s, 30,
            {{u"state"_s, u"running"_s}, {u"launcher_pid"_s, QCoreApplication::applicationPid()}},
            1000);

        testing::CommandResult r = cli({u"runs"_s});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains(u"SIZE"_s), qPrintable(r.out));
        // What each run holds: its files (the record's disk reserve included).
        const auto size = [](const QStringList &dirs) {
            qint64 bytes = 0;
            for (const QString &d : dirs)
                bytes += RunPrune::diskBytes(d);
            return SyncManifest::formatSize(bytes);
        };
        QVERIFY2(QRegularExpression(u"\\nold .* "_s + QRegularExpression::escape(size({old})))
                     .match(r.out)
                     .hasMatch(),
                 qPrintable(r.out));

        // A dry run lists and deletes nothing.
        r = cli({u"runs"_s, u"prune"_s, u"--keep"_s, u"0"_s, u"--dry-run"_s});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(u"would delete old"_s) && r.out.contains(u"would delete fresh"_s),
                 qPrintable(r.out));
        QVERIFY2(r.out.contains(u"kept     running"_s), qPrintable(r.out));
        QVERIFY2(
            r.out.contains(u"3 run(s) would be deleted, %1 freed"_s.arg(size({fresh, old, older}))),
            qPrintable(r.out));
        for (const QString &dir : {fresh, old, older, running})
            QVERIFY2(QFileInfo::exists(dir), qPrintable(dir));

        const QString freed = size({old, older});
        r = cli({u"runs"_s, u"prune"_s, u"--older-than"_s, u"7d"_s});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(u"2 run(s) deleted, %1 freed"_s.arg(freed)), qPrintable(r.out));
        QVERIFY(!QFileInfo::exists(old));
        QVERIFY(!QFileInfo::exists(older));
        QVERIFY(QFileInfo::exists(fresh));
        QVERIFY(QFileInfo::exists(running));
    }

    void badFlagsNamed_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("says");
        QTest::newRow("nothing asked") << QStringList{} << u"--older-than AGE, --keep N"_s;
        QTest::newRow("bad age") << QStringList{u"--older-than"_s, u"soon"_s}
                                 << u"--older-than: \"soon\" is not an age"_s;
        QTest::newRow("bad count")
            << QStringList{u"--keep"_s, u"-3"_s} << u"--keep: \"-3\" is not a number"_s;
    }
    void badFlagsNamed()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, says);
        const testing::CommandResult r = cli(QStringList{u"runs"_s, u"prune"_s} + args);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(says), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestRunsPrune)
#include "tst_runsprune.moc"
