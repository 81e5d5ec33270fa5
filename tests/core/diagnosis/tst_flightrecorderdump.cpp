// SPDX-License-Identifier: GPL-3.0-or-later
//
// FlightRecorderDump on what torch 2.14.1 really writes (tests/core/diagnosis/data/fr/, made by the
// scripts in data/fr/src with the project's venv) and on hostile bytes: garbage, cut-off JSON,
// wrong types, huge numbers, too many entries, deep nesting, more than the size limit.
#include "diagnosis/flightrecorderdump.h"

#include <QDir>
#include <QFile>
#include <QTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;

namespace {

QByteArray sample(const QString &name)
{
    QFile f(QStringLiteral(RANKDECK_FR_DATA "/") + name);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("missing test data %s", qPrintable(name));
    return f.readAll();
}

QStringList realDumps()
{
    QStringList out;
    const QDir dir(QStringLiteral(RANKDECK_FR_DATA));
    for (const QString &c : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot))
        for (const QString &f : QDir(dir.filePath(c)).entryList({u"rank_*.json"_s}))
            out << c + u'/' + f;
    return out;
}

// One entry as torch writes it, with `field` replaced by `value` (raw JSON) when given.
QByteArray entryJson(const QByteArray &field = {}, const QByteArray &value = {})
{
    QList<QPair<QByteArray, QByteArray>> fields = {
        {"collective_seq_id", "3"},
        {"process_group", R"(["0", "default_pg"])"},
        {"profiling_name", R"("gloo:all_reduce")"},
        {"time_created_ns", "1796177231381850638"},
        {"pg_id", "0"},
        {"input_sizes", "[[21]]"},
        {"input_dtypes", R"(["Float"])"},
        {"state", R"("scheduled")"},
        {"retired", "false"},
        {"is_p2p", "false"},
    };
    QByteArrayList parts;
    bool replaced = false;
    for (const auto &[k, v] : fields) {
        if (k == field) {
            replaced = true;
            if (!value.isNull())
                parts << '"' + k + "\": " + value;
        } else {
            parts << '"' + k + "\": " + v;
        }
    }
    if (!replaced && !field.isEmpty())
        parts << '"' + field + "\": " + value;
    return '{' + parts.join(", ") + '}';
}

QByteArray dumpJson(const QByteArray &entries, const QByteArray &status = {})
{
    return R"({"version": "2.10", "pg_config": {}, "pg_status": )" +
           (status.isEmpty() ? QByteArray("{}") : status) + R"(, "entries": [)" + entries + "]}";
}

} // namespace

class TestFlightRecorderDump : public QObject
{
    Q_OBJECT
private slots:
    void readsRealDumps_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("entries");
        QTest::addColumn<QString>("lastOp");
        QTest::addColumn<QString>("lastGroup"); // name/desc
        QTest::addColumn<qint64>("lastSeq");
        QTest::addColumn<QString>("lastSizes");
        QTest::addColumn<bool>("lastRetired");
        QTest::addColumn<QString>("status"); // "pg:enqueued/completed" per group
        // Uneven shards: rank 0 in barrier, rank 1 in DDP's gradient all_reduce of 21 floats.
        QTest::newRow("uneven rank 0")
            << u"uneven/rank_0.json"_s << 10 << u"barrier"_s << u"0/default_pg"_s << 10LL << u""_s
            << false << u"0:10/9"_s;
        QTest::newRow("uneven rank 1")
            << u"uneven/rank_1.json"_s << 10 << u"all_reduce"_s << u"0/default_pg"_s << 10LL
            << u"21 Float"_s << false << u"0:10/9"_s;
        QTest::newRow("missing rank 3 (asleep)")
            << u"missing/rank_3.json"_s << 5 << u"all_reduce"_s << u"0/default_pg"_s << 5LL
            << u"8 Float"_s << true << u"0:5/5"_s;
        QTest::newRow("size mismatch rank 2")
            << u"sizemismatch/rank_2.json"_s << 4 << u"all_reduce"_s << u"0/default_pg"_s << 4LL
            << u"264 Float"_s << true << u"0:4/4"_s;
        QTest::newRow("subgroup rank 0")
            << u"subgroup/rank_0.json"_s << 3 << u"all_reduce"_s << u"1/undefined"_s << 2LL
            << u"16 Float"_s << false << u"0:1/1 1:2/1"_s;
        QTest::newRow("all entered rank 0")
            << u"allentered/rank_0.json"_s << 4 << u"all_reduce"_s << u"0/default_pg"_s << 4LL
            << u"33554432 Float"_s << false << u"0:4/3"_s;
        QTest::newRow("recorder off") << u"froff/rank_0.json"_s << 0 << QString() << QString()
                                      << 0LL << QString() << false << QString();
    }
    void readsRealDumps()
    {
        QFETCH(QString, file);
        QFETCH(int, entries);
        QString error = u"stale"_s;
        const FlightRecorderDump d = FlightRecorderDump::parse(sample(file), &error);
        QVERIFY2(d.valid, qPrintable(error));
        QVERIFY(error.isEmpty());
        QCOMPARE(d.version, u"2.10"_s);
        QCOMPARE(int(d.entries.size()), entries);
        // Gloo files its groups' ranks under the empty name only: nothing kept.
        QVERIFY(d.groups.isEmpty());
        QStringList status;
        for (const FlightRecorderGroupStatus &s : d.status)
            status << u"%1:%2/%3"_s.arg(s.pgId).arg(s.lastEnqueued).arg(s.lastCompleted);
        QTEST(status.join(u' '), "status");
        if (entries == 0)
            return;
        const FlightRecorderEntry &e = d.entries.last();
        QCOMPARE(e.backend, u"gloo"_s);
        QTEST(e.op, "lastOp");
        QTEST(e.groupName + u'/' + e.groupDesc, "lastGroup");
        QTEST(e.collectiveSeq, "lastSeq");
        QString sizes;
        if (!e.inputSizes.isEmpty())
            sizes = u"%1 %2"_s.arg(e.inputSizes.first().value(0)).arg(e.inputDtypes.value(0));
        QTEST(sizes, "lastSizes");
        QTEST(e.retired, "lastRetired");
        QCOMPARE(e.state, u"scheduled"_s); // Gloo never moves it on
        QVERIFY(e.timeCreatedNs > 1'700'000'000'000'000'000LL);
        QCOMPARE(e.timeoutMs, 1800000LL); // Gloo's default 30 min
        QVERIFY(!e.isP2p);
        QCOMPARE(e.profilingName(), u"gloo:"_s + e.op);
    }

    // What parse keeps, written in torch's shape and read again, is the same dump.
    void roundTripsRealDumps_data()
    {
        QTest::addColumn<QString>("file");
        for (const QString &f : realDumps())
            QTest::newRow(qPrintable(f)) << f;
        QVERIFY(realDumps().size() >= 20);
    }
    void roundTripsRealDumps()
    {
        QFETCH(QString, file);
        const FlightRecorderDump d = FlightRecorderDump::parse(sample(file));
        QVERIFY(d.valid);
        QString error;
        const FlightRecorderDump again = FlightRecorderDump::parse(d.toJson(), &error);
        QVERIFY2(again.valid, qPrintable(error));
        QCOMPARE(again, d);
    }

    void namesWhatIsWrong_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("error");
        const QByteArray real = sample(u"uneven/rank_0.json"_s);
        QTest::newRow("empty") << QByteArray() << u"the dump is empty"_s;
        QTest::newRow("blank") << QByteArray("  \n") << u"the dump is empty"_s;
        QTest::newRow("garbage") << QByteArray("\x89PNG\r\n\x1a\n\0\0", 10) << u"not JSON"_s;
        QTest::newRow("cut in half") << real.left(real.size() / 2) << u"not JSON"_s;
        QTest::newRow("cut one byte short") << real.chopped(1) << u"not JSON"_s;
        QTest::newRow("a list") << QByteArray("[1, 2]") << u"the JSON is not an object"_s;
        QTest::newRow("no version")
            << QByteArray(R"({"entries": []})") << u"no \"version\" string"_s;
        QTest::newRow("version of another major")
            << QByteArray(R"({"version": "3.0", "entries": []})")
            << u"flight-recorder dump version \"3.0\" is not one this build reads"_s;
        QTest::newRow("version older than the fields read")
            << QByteArray(R"({"version": "2.1", "entries": []})")
            << u"flight-recorder dump version \"2.1\" is not one this build reads"_s;
        QTest::newRow("version a word")
            << QByteArray(R"({"version": "latest", "entries": []})")
            << u"flight-recorder dump version \"latest\" is not one this build reads"_s;
        QTest::newRow("entries an object")
            << QByteArray(R"({"version": "2.10", "entries": {}})") << u"entries is not a list"_s;
        QTest::newRow("pg_status a list") << QByteArray(R"({"version": "2.10", "pg_status": []})")
                                          << u"pg_status is not an object"_s;
        QTest::newRow("entry not an object") << dumpJson("7") << u"entry 1 of 1: not an object"_s;
        QTest::newRow("no process_group")
            << dumpJson(entryJson("process_group")) << u"process_group is not [name, desc]"_s;
        QTest::newRow("process_group of numbers") << dumpJson(entryJson("process_group", "[0, 1]"))
                                                  << u"process_group is not [name, desc]"_s;
        QTest::newRow("seq a string")
            << dumpJson(entryJson("collective_seq_id", R"("3")"))
            << u"entry 1 of 1: collective_seq_id is not an integer of at least 0"_s;
        QTest::newRow("seq 1e300") << dumpJson(entryJson("collective_seq_id", "1e300"))
                                   << u"collective_seq_id is not an integer"_s;
        QTest::newRow("seq 2^63") << dumpJson(entryJson("collective_seq_id", "9223372036854775808"))
                                  << u"collective_seq_id is not an integer"_s;
        QTest::newRow("seq negative") << dumpJson(entryJson("collective_seq_id", "-5"))
                                      << u"collective_seq_id is not an integer of at least 0"_s;
        QTest::newRow("seq 2.5") << dumpJson(entryJson("collective_seq_id", "2.5"))
                                 << u"collective_seq_id is not an integer"_s;
        QTest::newRow("no time") << dumpJson(entryJson("time_created_ns"))
                                 << u"time_created_ns is not an integer"_s;
        QTest::newRow("profiling_name a number")
            << dumpJson(entryJson("profiling_name", "12")) << u"profiling_name is not a string"_s;
        QTest::newRow("sizes flat") << dumpJson(entryJson("input_sizes", "[21]"))
                                    << u"input_sizes holds something that is not a tensor's"_s;
        QTest::newRow("sizes negative") << dumpJson(entryJson("input_sizes", "[[-1]]"))
                                        << u"input_sizes is not an integer of at least 0"_s;
        QTest::newRow("too many tensors")
            << dumpJson(entryJson("input_sizes", '[' + QByteArray("[1],").repeated(64) + "[1]]"))
            << u"input_sizes lists 65 tensors, more than 64"_s;
        QTest::newRow("too many dims")
            << dumpJson(entryJson("output_sizes", "[[" + QByteArray("1,").repeated(16) + "1]]"))
            << u"output_sizes holds something that is not a tensor's sizes"_s;
        QTest::newRow("dtypes not strings")
            << dumpJson(entryJson("input_dtypes", "[1]")) << u"input_dtypes holds something"_s;
        QTest::newRow("retired a string")
            << dumpJson(entryJson("retired", R"("yes")")) << u"retired is not true or false"_s;
        QTest::newRow("second entry bad")
            << dumpJson(entryJson() + ',' + entryJson("pg_id", R"("zero")"))
            << u"entry 2 of 2: pg_id is not an integer"_s;
        QTest::newRow("status not a number")
            << dumpJson(entryJson(), R"({"0": {"last_enqueued_collective": "abc",
                                                "last_completed_collective": "1"}})")
            << u"pg_status \"0\": last_enqueued_collective \"abc\" is not a number"_s;
        QTest::newRow("status below -1")
            << dumpJson(entryJson(), R"({"0": {"last_enqueued_collective": "-7",
                                                "last_completed_collective": "1"}})")
            << u"is not a number of at least -1"_s;
        QTest::newRow("status missing a field")
            << dumpJson(entryJson(), R"({"0": {"last_enqueued_collective": "1"}})")
            << u"last_completed_collective is not an integer"_s;
        QTest::newRow("status key not an id")
            << dumpJson(entryJson(), R"({"default": {"last_enqueued_collective": "1",
                                                      "last_completed_collective": "1"}})")
            << u"pg_status \"default\": the key is not a process group id"_s;
        QTest::newRow("pg_config ranks garbage")
            << QByteArray(R"({"version": "2.10", "pg_config": {"tp": {"name": "tp",
                              "desc": "x", "ranks": "0 and 1"}}})")
            << u"pg_config \"tp\": ranks is not a list like"_s;
        QTest::newRow("deep nesting") << QByteArray(100000, '[') << u"not JSON"_s;
        QByteArray huge(frlimits::MaxBytes + 1, ' ');
        huge.replace(0, 2, "{}");
        QTest::newRow("over the size limit") << huge << u"more than the 32 MiB"_s;
    }
    void namesWhatIsWrong()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, error);
        QString got;
        const FlightRecorderDump d = FlightRecorderDump::parse(bytes, &got);
        QVERIFY(!d.valid);
        QVERIFY(d.entries.isEmpty());
        QVERIFY2(got.contains(error), qPrintable(got));
    }

    void keepsTheNewestEntries()
    {
        QByteArrayList entries;
        for (int i = 1; i <= 5000; ++i)
            entries << entryJson("collective_seq_id", QByteArray::number(i));
        QString error;
        const FlightRecorderDump d = FlightRecorderDump::parse(dumpJson(entries.join(',')), &error);
        QVERIFY2(d.valid, qPrintable(error));
        QCOMPARE(qint64(d.entries.size()), qint64(frlimits::MaxEntries));
        QCOMPARE(d.droppedEntries, qint64(5000 - frlimits::MaxEntries));
        QCOMPARE(d.entries.first().collectiveSeq, qint64(5000 - frlimits::MaxEntries + 1));
        QCOMPARE(d.entries.last().collectiveSeq, 5000LL);
    }

    void boundsAndExactNumbers()
    {
        const QByteArray longName = "gloo:" + QByteArray(10000, 'x');
        const QByteArray json = dumpJson(
            entryJson("profiling_name", '"' + longName + '"') + ',' +
                entryJson("time_created_ns", "9223372036854775807") + ',' +
                entryJson("process_group", R"(["2", "\ud800 lone"])") + ',' +
                entryJson("profiling_name", R"("a:b:c")") + ',' +
                entryJson("profiling_name", R"("barrier")") + ',' + entryJson("state", "null"),
            R"({"0": {"last_enqueued_collective": 7, "last_completed_collective": "-1",
                      "last_started_collective": "-1"}})");
        QString error;
        const FlightRecorderDump d = FlightRecorderDump::parse(json, &error);
        QVERIFY2(d.valid, qPrintable(error));
        QCOMPARE(int(d.entries.size()), 6);
        QCOMPARE(d.entries[0].backend, u"gloo"_s);
        QCOMPARE(qint64(d.entries[0].op.size()),
                 qint64(frlimits::MaxString - 5)); // the name is cut, then split
        QCOMPARE(d.entries[1].timeCreatedNs, std::numeric_limits<qint64>::max());
        QCOMPARE(d.entries[2].groupDesc, QString(QChar::ReplacementCharacter) + u" lone"_s);
        QCOMPARE(d.entries[3].backend, u"a"_s);
        QCOMPARE(d.entries[3].op, u"b:c"_s);
        QCOMPARE(d.entries[4].backend, QString());
        QCOMPARE(d.entries[4].op, u"barrier"_s);
        QCOMPARE(d.entries[5].state, u"scheduled"_s); // null: torch's default
        QCOMPARE(int(d.status.size()), 1);
        QCOMPARE(d.status[0].lastEnqueued, 7LL); // a number where torch writes a string
        QCOMPARE(d.status[0].lastCompleted, -1LL);
        QCOMPARE(FlightRecorderDump::parse(d.toJson()), d);
    }

    // NCCL files each group under its name with its global ranks; Gloo files them under "".
    void keepsNamedGroups()
    {
        const QByteArray json = R"({"version": "2.10", "pg_config": {
            "": {"name": "", "desc": "", "ranks": "[0, 1]"},
            "0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2, 3]"},
            "5": {"name": "5", "desc": "tp", "ranks": "[1, 3]"},
            "6": {"name": "6", "desc": "empty", "ranks": "[]"}}})";
        QString error;
        const FlightRecorderDump d = FlightRecorderDump::parse(json, &error);
        QVERIFY2(d.valid, qPrintable(error));
        QCOMPARE(int(d.groups.size()), 3);
        QVERIFY(d.group(u"5"_s));
        QCOMPARE(d.group(u"5"_s)->desc, u"tp"_s);
        QCOMPARE(d.group(u"5"_s)->ranks, QList<int>({1, 3}));
        QCOMPARE(d.group(u"0"_s)->ranks, QList<int>({0, 1, 2, 3}));
        QVERIFY(d.group(u"6"_s)->ranks.isEmpty());
        QVERIFY(!d.group(QString()));
        QCOMPARE(FlightRecorderDump::parse(d.toJson()), d);
    }

    void describesEntries_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<QList<QList<qint64>>>("sizes");
        QTest::addColumn<QStringList>("dtypes");
        QTest::addColumn<QString>("text");
        using Sizes = QList<QList<qint64>>;
        QTest::newRow("barrier") << u"barrier"_s << Sizes{} << QStringList{} << u"barrier"_s;
        QTest::newRow("DDP bucket") << u"all_reduce"_s << Sizes{{21}} << QStringList{u"Float"_s}
                                    << u"all_reduce of 21 float32"_s;
        QTest::newRow("matrix") << u"broadcast"_s << Sizes{{4, 5}} << QStringList{u"BFloat16"_s}
                                << u"broadcast of 4×5 bfloat16"_s;
        QTest::newRow("scalar") << u"all_reduce"_s << Sizes{{}} << QStringList{u"Long"_s}
                                << u"all_reduce of scalar int64"_s;
        QTest::newRow("coalesced")
            << u"allreduce_coalesced"_s << Sizes{{8}, {4, 2}} << QStringList{u"Float"_s, u"Half"_s}
            << u"allreduce_coalesced of 2 tensors (8, 4×2) float32/float16"_s;
        QTest::newRow("many") << u"all_gather"_s << Sizes{{1}, {2}, {3}, {4}, {5}, {6}}
                              << QStringList(6, u"Int"_s)
                              << u"all_gather of 6 tensors (1, 2, 3, 4, …) int32"_s;
        QTest::newRow("control characters")
            << u"all\x1b[31m_reduce\n"_s << Sizes{{1}} << QStringList{u"Float\t"_s}
            << u"all_reduce\u240a of 1 float\u2409"_s; // escapes gone, controls visible
    }
    void describesEntries()
    {
        FlightRecorderEntry e;
        QFETCH(QString, op);
        e.op = op;
        QFETCH(QList<QList<qint64>>, sizes);
        e.inputSizes = sizes;
        QFETCH(QStringList, dtypes);
        e.inputDtypes = dtypes;
        QTEST(e.describe(), "text");
    }

    void dtypeNames_data()
    {
        QTest::addColumn<QString>("torch");
        QTest::addColumn<QString>("name");
        QTest::newRow("Float") << u"Float"_s << u"float32"_s;
        QTest::newRow("BFloat16") << u"BFloat16"_s << u"bfloat16"_s;
        QTest::newRow("Long") << u"Long"_s << u"int64"_s;
        QTest::newRow("unknown") << u"Float8_e4m3fn"_s << u"float8_e4m3fn"_s;
    }
    void dtypeNames()
    {
        QFETCH(QString, torch);
        QTEST(frDtypeName(torch), "name");
    }
};

QTEST_GUILESS_MAIN(TestFlightRecorderDump)
#include "tst_flightrecorderdump.moc"
