// SPDX-License-Identifier: GPL-3.0-or-later
#include "record/runrecord.h"

#include <QDir>
#include <QFile>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>

using namespace rankdeck;

class TestRunRecord : public QObject
{
    Q_OBJECT

private slots:
    void newRunIds_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("part");
        QTest::newRow("plain") << QStringLiteral("linear") << QStringLiteral("-linear-");
        QTest::newRow("spaces and case")
            << QStringLiteral("My Big Run") << QStringLiteral("-my-big-run-");
        QTest::newRow("hostile") << QStringLiteral("../../etc; rm -rf $(x)")
                                 << QStringLiteral("-etc-rm-rf-x-");
        QTest::newRow("empty") << QString() << QStringLiteral("-run-");
        QTest::newRow("non-ascii") << QStringLiteral("Läufer") << QStringLiteral("-l-ufer-");
    }
    void newRunIds()
    {
        QFETCH(QString, name);
        QFETCH(QString, part);
        const QString id = RunRecord::newRunId(name);
        QVERIFY2(id.contains(part), qPrintable(id));
        QVERIFY(!id.contains(QLatin1Char('/')));
        QVERIFY(QRegularExpression(QStringLiteral("^\\d{8}-\\d{6}-[a-z0-9-]+-[0-9a-f]{4}$"))
                    .match(id)
                    .hasMatch());
    }

    void createListResolve()
    {
        QTemporaryDir dir;
        const QString runs = dir.path() + QStringLiteral("/runs");
        QString error;
        RunRecord a, b, c;
        TrainingConfig config;
        config.workerArguments = {QStringLiteral("--steps"), QStringLiteral("3")};
        QVERIFY2(a.create(runs, QStringLiteral("20260101-000000-x-0001"), QStringLiteral("x"),
                          Profile::builtinLocal(2), config, &error),
                 qPrintable(error));
        QTest::qWait(5);
        QVERIFY(b.create(runs, QStringLiteral("20260101-000000-y-0002"), QStringLiteral("y"),
                         Profile::builtinLocal(3), config, &error));
        QTest::qWait(5);
        QVERIFY(c.create(runs, QStringLiteral("20260101-000000-x-0003"), QStringLiteral("x"),
                         Profile::builtinLocal(1), config, &error));
        // Same id twice, or an id that is a path: refused.
        RunRecord d;
        QVERIFY(!d.create(runs, QStringLiteral("20260101-000000-x-0001"), QStringLiteral("x"),
                          Profile::builtinLocal(1), config, &error));
        QVERIFY(!d.create(runs, QStringLiteral("../evil"), QStringLiteral("x"),
                          Profile::builtinLocal(1), config, &error));
        // A newline at the end of an id ('$' would match before it; issue 29).
        QVERIFY(!d.create(runs, QStringLiteral("20260101-000000-z-0004\n"), QStringLiteral("z"),
                          Profile::builtinLocal(1), config, &error));
        QVERIFY2(error.contains(QStringLiteral("invalid run id")), qPrintable(error));
        // Artifacts are named like ids.
        QVERIFY(!a.writeArtifact(QStringLiteral("job.a1.sbatch\n"), "x", &error));
        // Nor as a compressed segment of the record's own files, which readers would take in.
        QVERIFY(!a.writeArtifact(QStringLiteral("rank-0.log.0-4096.zst"), "x", &error));
        QVERIFY2(error.contains(QStringLiteral("rank-0.log.0-4096.zst")), qPrintable(error));
        QVERIFY(a.writeArtifact(QStringLiteral("weights.zst"), "x", &error));
        // Private: other users cannot read logs or profiles.
        QCOMPARE(QFile::permissions(a.directory()) &
                     (QFile::ReadGroup | QFile::ReadOther | QFile::ExeGroup | QFile::ExeOther),
                 QFileDevice::Permissions());
        // A directory that is not a run is skipped.
        QDir().mkpath(runs + QStringLiteral("/junk"));

        QJsonObject state;
        state[QStringLiteral("state")] = QStringLiteral("failed");
        state[QStringLiteral("root_cause_summary")] = QStringLiteral("rank 1: exit code 3");
        state[QStringLiteral("launcher_pid")] = qint64(::getpid());
        QVERIFY(a.writeState(state));
        state[QStringLiteral("state")] = QStringLiteral("running");
        state[QStringLiteral("hung")] = true; // `runs` says "running (hung)"
        QVERIFY(b.writeState(state));

        const QList<RunInfo> list = RunRecord::list(runs);
        QCOMPARE(list.size(), 3);
        QCOMPARE(list[0].id, c.id()); // newest first
        QCOMPARE(list[2].id, a.id());
        QCOMPARE(list[2].state, RunState::Failed);
        QCOMPARE(list[2].rootCause, QStringLiteral("rank 1: exit code 3"));
        QCOMPARE(list[2].worldSize, 2);
        QCOMPARE(list[1].state, RunState::Running);
        QVERIFY(list[1].hung);
        QVERIFY(!list[2].hung);
        QVERIFY(!list[1].launcherGone); // this process is its launcher

        QCOMPARE(RunRecord::resolve(runs, QStringLiteral("x"), &error),
                 c.directory()); // newest of the name
        QCOMPARE(RunRecord::resolve(runs, a.id(), &error), a.directory());
        QVERIFY(RunRecord::resolve(runs, QStringLiteral("nope"), &error).isEmpty());
        QVERIFY(error.contains(QStringLiteral("nope")));
        QVERIFY(RunRecord::resolve(runs, QStringLiteral("../runs"), &error).isEmpty());

        RunRecord reopened;
        QVERIFY(reopened.open(b.directory(), &error));
        QCOMPARE(reopened.name(), QStringLiteral("y"));
        QCOMPARE(reopened.profile(), Profile::builtinLocal(3));
        QCOMPARE(reopened.config().workerArguments, config.workerArguments);
        QVERIFY(!reopened.open(runs + QStringLiteral("/junk"), &error));

        QVERIFY(!reopened.stopRequested());
        QVERIFY(reopened.requestStop(&error));
        QVERIFY(b.stopRequested());
        QVERIFY(!b.takeStackDumpRequest());
        QVERIFY(reopened.requestStackDump(&error));
        QVERIFY(b.takeStackDumpRequest());
        QVERIFY(!b.takeStackDumpRequest());
    }
};

QTEST_GUILESS_MAIN(TestRunRecord)
#include "tst_runrecord.moc"
