// SPDX-License-Identifier: GPL-3.0-or-later
// --fault / --fault-rank parsing: every KIND, bad specs named in the message, other ranks idle.
#include "crash/faultinjection.h"

#include <QTest>

using rankdeck::fault::FaultInjector;
using rankdeck::fault::FaultKind;

Q_DECLARE_METATYPE(FaultKind)

class TestFaultInjection : public QObject
{
    Q_OBJECT
private slots:
    void parsesEveryKind_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<FaultKind>("kind");
        QTest::addColumn<int>("step");
        QTest::addColumn<int>("exitCode");
        QTest::newRow("segv") << "segv@5" << FaultKind::Segv << 5 << 0;
        QTest::newRow("abort") << "abort@0" << FaultKind::Abort << 0 << 0;
        QTest::newRow("fpe") << "fpe@12" << FaultKind::Fpe << 12 << 0;
        QTest::newRow("throw") << "throw@3" << FaultKind::Throw << 3 << 0;
        QTest::newRow("torch-check") << "torch-check@7" << FaultKind::TorchCheck << 7 << 0;
        QTest::newRow("exit") << "exit:3@2" << FaultKind::Exit << 2 << 3;
        QTest::newRow("exit 0") << "exit:0@1" << FaultKind::Exit << 1 << 0;
        QTest::newRow("hang") << "hang@4" << FaultKind::Hang << 4 << 0;
        QTest::newRow("skip-allreduce") << "skip-allreduce@6" << FaultKind::SkipAllreduce << 6 << 0;
        QTest::newRow("skip-allreduce:2")
            << "skip-allreduce:2@6" << FaultKind::SkipAllreduce << 6 << 0;
    }
    void parsesEveryKind()
    {
        QFETCH(QString, spec);
        QFETCH(FaultKind, kind);
        QFETCH(int, step);
        QFETCH(int, exitCode);
        std::string error;
        const auto f = FaultInjector::parse(spec.toStdString(), 1, 1, &error);
        QVERIFY2(f.has_value(), error.c_str());
        QCOMPARE(f->kind(), kind);
        QCOMPARE(f->step(), step);
        QCOMPARE(f->exitCode(), exitCode);
        QVERIFY(f->active());
        QVERIFY(
            QString::fromStdString(f->describe()).startsWith(spec.section(QLatin1Char('@'), 0, 0)));
    }

    void rejectsBadSpecs_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<int>("faultRank");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("no step") << "segv" << 1 << "KIND@STEP";
        QTest::newRow("empty") << "" << 1 << "KIND@STEP";
        QTest::newRow("unknown kind") << "explode@3" << 1 << "explode";
        QTest::newRow("step not a number") << "segv@x" << 1 << "'x'";
        QTest::newRow("negative step") << "segv@-1" << 1 << "'-1'";
        QTest::newRow("step with junk") << "segv@3abc" << 1 << "'3abc'";
        QTest::newRow("exit without code") << "exit@3" << 1 << "exit:3@5";
        QTest::newRow("exit code too big") << "exit:300@3" << 1 << "0..255";
        QTest::newRow("argument on segv") << "segv:2@3" << 1 << "takes no";
        QTest::newRow("negative rank") << "segv@3" << -1 << "--fault-rank";
        QTest::newRow("skip bucket not a number") << "skip-allreduce:x@3" << 1 << "bucket index";
        QTest::newRow("skip negative bucket") << "skip-allreduce:-1@3" << 1 << "bucket index";
    }
    void rejectsBadSpecs()
    {
        QFETCH(QString, spec);
        QFETCH(int, faultRank);
        QFETCH(QString, mentions);
        std::string error;
        const auto f = FaultInjector::parse(spec.toStdString(), faultRank, 0, &error);
        QVERIFY(!f.has_value());
        const QString message = QString::fromStdString(error);
        QVERIFY2(message.contains(QLatin1String("--fault")), qPrintable(message));
        QVERIFY2(message.contains(mentions), qPrintable(message));
    }

    // On any rank but the fault's, and on the fault's rank at other steps, nothing happens:
    // the process survives calls that would kill it if the injector fired.
    void staysIdleElsewhere_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::newRow("segv") << "segv@2";
        QTest::newRow("exit") << "exit:9@2";
        QTest::newRow("hang") << "hang@2";
    }
    void staysIdleElsewhere()
    {
        QFETCH(QString, spec);
        std::string error;
        auto other = FaultInjector::parse(spec.toStdString(), 1, 0, &error);
        QVERIFY(other.has_value());
        QVERIFY(!other->active());
        for (int step = 0; step < 5; ++step) {
            other->maybeInject(step);
            QVERIFY(!other->shouldSkipCollectives(step));
        }
        auto mine = FaultInjector::parse(spec.toStdString(), 1, 1, &error);
        QVERIFY(mine.has_value());
        mine->maybeInject(0);
        mine->maybeInject(1);
        mine->maybeInject(3);
    }

    void hangSkipsCollectivesFromItsStep()
    {
        std::string error;
        const auto f = FaultInjector::parse("hang@3", 2, 2, &error);
        QVERIFY(f.has_value());
        QVERIFY(!f->shouldSkipCollectives(2));
        QVERIFY(f->shouldSkipCollectives(3));
        QVERIFY(f->shouldSkipCollectives(10));
        const auto crash = FaultInjector::parse("segv@3", 2, 2, &error);
        QVERIFY(!crash->shouldSkipCollectives(3));
    }

    // skip-allreduce names its bucket at its step on its rank only; maybeInject() returns (the
    // trainer leaves the bucket out), and the rank keeps joining later collectives.
    void skipAllreduceNamesOneBucketOnce_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<int>("bucket");
        QTest::newRow("default bucket") << "skip-allreduce@3" << 0;
        QTest::newRow("bucket 1") << "skip-allreduce:1@3" << 1;
    }
    void skipAllreduceNamesOneBucketOnce()
    {
        QFETCH(QString, spec);
        QFETCH(int, bucket);
        std::string error;
        auto mine = FaultInjector::parse(spec.toStdString(), 1, 1, &error);
        QVERIFY2(mine.has_value(), error.c_str());
        mine->maybeInject(3);
        QCOMPARE(mine->skippedBucket(2), -1);
        QCOMPARE(mine->skippedBucket(3), bucket);
        QCOMPARE(mine->skippedBucket(4), -1);
        QVERIFY(!mine->shouldSkipCollectives(3));
        QCOMPARE(QString::fromStdString(mine->describe()),
                 spec.section(QLatin1Char('@'), 0, 0) + QLatin1String("@3 on rank 1"));
        const auto other = FaultInjector::parse(spec.toStdString(), 1, 0, &error);
        QCOMPARE(other->skippedBucket(3), -1);
    }
};

QTEST_GUILESS_MAIN(TestFaultInjection)
#include "tst_faultinjection.moc"
