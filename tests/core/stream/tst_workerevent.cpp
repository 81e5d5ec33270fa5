// SPDX-License-Identifier: GPL-3.0-or-later
//
// WorkerEvent is the launcher's view of one worker event: fromJson() decides what is an event at
// all, and the accessors must never fail, whatever a newer, older or broken worker sends.
#include "stream/workerevent.h"

#include "wire/wireprotocol.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>
#include <QVariant>

#include <climits>
#include <cmath>
#include <limits>

using namespace rankdeck;
namespace wire = rankdeck::wire;

Q_DECLARE_METATYPE(rankdeck::WorkerEvent::Type)

namespace {

QString name(std::string_view n)
{
    return QString::fromLatin1(n.data(), qsizetype(n.size()));
}

// A valid step event for rank 2 with `extra` (JSON members, without braces) added.
QByteArray stepWith(const QByteArray &extra)
{
    QByteArray json = R"({"t":"step","ts":1700000000000000,"rank":2)";
    if (!extra.isEmpty())
        json += ',' + extra;
    return json + '}';
}

WorkerEvent parsed(const QByteArray &json)
{
    QString error;
    const std::optional<WorkerEvent> ev = WorkerEvent::fromJson(json, &error);
    if (!ev)
        qWarning("fromJson(%s) failed: %s", json.constData(), qPrintable(error));
    return ev.value_or(WorkerEvent());
}

} // namespace

class TestWorkerEvent : public QObject
{
    Q_OBJECT
private slots:
    void everyTypeParses_data();
    void everyTypeParses();
    void typeNames_data();
    void typeNames();
    void rejected_data();
    void rejected();
    void rejectedWithoutErrorPointer();
    void longUnknownTypeIsCutInTheMessage();
    void bigIntegersStayExact();
    void integerField_data();
    void integerField();
    void numberField_data();
    void numberField();
    void stringField_data();
    void stringField();
    void hasSeesNullMembers();
    void shortcuts_data();
    void shortcuts();
    void defaultEventIsInvalidAndSafe();
    void hostilePayloads_data();
    void hostilePayloads();
    void copiesThroughQVariant();
};

void TestWorkerEvent::everyTypeParses_data()
{
    QTest::addColumn<QString>("typeName");
    QTest::addColumn<WorkerEvent::Type>("type");

    const std::pair<std::string_view, WorkerEvent::Type> types[] = {
        {wire::event::Hello, WorkerEvent::Type::Hello},
        {wire::event::Store, WorkerEvent::Type::Store},
        {wire::event::Rendezvous, WorkerEvent::Type::Rendezvous},
        {wire::event::Step, WorkerEvent::Type::Step},
        {wire::event::Heartbeat, WorkerEvent::Type::Heartbeat},
        {wire::event::Checkpoint, WorkerEvent::Type::Checkpoint},
        {wire::event::Stopping, WorkerEvent::Type::Stopping},
        {wire::event::Finished, WorkerEvent::Type::Finished},
        {wire::event::Error, WorkerEvent::Type::Error},
        {wire::event::Crash, WorkerEvent::Type::Crash},
        {wire::event::Stacks, WorkerEvent::Type::Stacks},
        {wire::event::TfEvents, WorkerEvent::Type::TfEvents},
    };
    for (const auto &[n, t] : types)
        QTest::newRow(n.data()) << name(n) << t;
}

// What the real writer produces for each type comes back with type, rank, time, the payload
// bytes and every extra field.
void TestWorkerEvent::everyTypeParses()
{
    QFETCH(QString, typeName);
    QFETCH(WorkerEvent::Type, type);

    const std::string tn = typeName.toStdString();
    wire::WireEventWriter w(tn, 7, 1700000000123456);
    w.addString(wire::field::Host, "node-1").addInt(wire::field::Step, 12);
    std::string line = w.line();
    const qsizetype brace = qsizetype(line.find('{'));
    QVERIFY(brace > 0);
    const QByteArray json =
        QByteArray(line.data() + brace, qsizetype(line.size()) - brace).trimmed();

    QString error;
    const std::optional<WorkerEvent> ev = WorkerEvent::fromJson(json, &error);
    QVERIFY2(ev, qPrintable(error));
    QVERIFY(ev->isValid());
    QCOMPARE(ev->type(), type);
    QCOMPARE(ev->typeName(), typeName);
    QCOMPARE(ev->rank(), 7);
    QCOMPARE(ev->timeUs(), 1700000000123456);
    QCOMPARE(ev->json(), json);
    QCOMPARE(ev->host(), QStringLiteral("node-1"));
    QCOMPARE(ev->step(), 12);
    QCOMPARE(ev->fields().size(), 5);
}

void TestWorkerEvent::typeNames_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<WorkerEvent::Type>("type");

    QTest::newRow("step") << QStringLiteral("step") << WorkerEvent::Type::Step;
    QTest::newRow("stacks") << QStringLiteral("stacks") << WorkerEvent::Type::Stacks;
    QTest::newRow("empty") << QString() << WorkerEvent::Type::Unknown;
    QTest::newRow("upper case") << QStringLiteral("STEP") << WorkerEvent::Type::Unknown;
    QTest::newRow("trailing space") << QStringLiteral("step ") << WorkerEvent::Type::Unknown;
    QTest::newRow("prefix") << QStringLiteral("ste") << WorkerEvent::Type::Unknown;
    QTest::newRow("with NUL") << QStringLiteral("step") + QChar(u'\0')
                              << WorkerEvent::Type::Unknown;
    QTest::newRow("the word unknown") << QStringLiteral("unknown") << WorkerEvent::Type::Unknown;
}

void TestWorkerEvent::typeNames()
{
    QFETCH(QString, name);
    QFETCH(WorkerEvent::Type, type);
    QCOMPARE(WorkerEvent::typeFromName(name), type);
    if (type != WorkerEvent::Type::Unknown)
        QCOMPARE(WorkerEvent::typeName(type), name);
    QCOMPARE(WorkerEvent::typeName(WorkerEvent::Type::Unknown), QStringLiteral("unknown"));
}

void TestWorkerEvent::rejected_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("errorContains");

    QTest::newRow("empty") << QByteArray() << QStringLiteral("invalid JSON");
    QTest::newRow("not JSON") << QByteArray("step 1 loss 0.5") << QStringLiteral("invalid JSON");
    QTest::newRow("truncated") << QByteArray(R"({"t":"step","ts":1,"rank":)")
                               << QStringLiteral("invalid JSON");
    QTest::newRow("trailing garbage")
        << QByteArray(R"({"t":"step","ts":1,"rank":0} x)") << QStringLiteral("invalid JSON");
    QTest::newRow("two objects") << QByteArray(R"({"t":"step","ts":1,"rank":0}{})")
                                 << QStringLiteral("invalid JSON");
    QTest::newRow("array") << QByteArray(R"([{"t":"step","ts":1,"rank":0}])")
                           << QStringLiteral("not a JSON object");
    QTest::newRow("empty object") << QByteArray("{}") << QStringLiteral("\"t\" missing");
    QTest::newRow("t is a number") << QByteArray(R"({"t":1,"ts":1,"rank":0})")
                                   << QStringLiteral("\"t\" missing or not a string");
    QTest::newRow("t is null") << QByteArray(R"({"t":null,"ts":1,"rank":0})")
                               << QStringLiteral("\"t\" missing or not a string");
    QTest::newRow("t is an object")
        << QByteArray(R"({"t":{"t":"step"},"ts":1,"rank":0})") << QStringLiteral("\"t\"");
    QTest::newRow("unknown type") << QByteArray(R"({"t":"party","ts":1,"rank":0})")
                                  << QStringLiteral("unknown event type \"party\"");
    QTest::newRow("type named unknown")
        << QByteArray(R"({"t":"unknown","ts":1,"rank":0})") << QStringLiteral("unknown event type");
    QTest::newRow("type in upper case")
        << QByteArray(R"({"t":"STEP","ts":1,"rank":0})") << QStringLiteral("unknown event type");
    QTest::newRow("missing ts") << QByteArray(R"({"t":"step","rank":0})")
                                << QStringLiteral("\"ts\" missing or not an integer");
    QTest::newRow("ts as string") << QByteArray(R"({"t":"step","ts":"1","rank":0})")
                                  << QStringLiteral("\"ts\"");
    QTest::newRow("ts fractional")
        << QByteArray(R"({"t":"step","ts":1.5,"rank":0})") << QStringLiteral("\"ts\"");
    QTest::newRow("ts bool") << QByteArray(R"({"t":"step","ts":true,"rank":0})")
                             << QStringLiteral("\"ts\"");
    QTest::newRow("ts beyond int64")
        << QByteArray(R"({"t":"step","ts":1e19,"rank":0})") << QStringLiteral("\"ts\"");
    QTest::newRow("ts huge") << QByteArray(R"({"t":"step","ts":1e308,"rank":0})")
                             << QStringLiteral("\"ts\"");
    QTest::newRow("missing rank") << QByteArray(R"({"t":"step","ts":1})")
                                  << QStringLiteral("\"rank\" missing or not a rank number");
    QTest::newRow("rank as string")
        << QByteArray(R"({"t":"step","ts":1,"rank":"0"})") << QStringLiteral("\"rank\"");
    QTest::newRow("rank null") << QByteArray(R"({"t":"step","ts":1,"rank":null})")
                               << QStringLiteral("\"rank\"");
    QTest::newRow("rank negative")
        << QByteArray(R"({"t":"step","ts":1,"rank":-1})") << QStringLiteral("\"rank\"");
    QTest::newRow("rank fractional")
        << QByteArray(R"({"t":"step","ts":1,"rank":0.5})") << QStringLiteral("\"rank\"");
    QTest::newRow("rank above INT_MAX")
        << QByteArray(R"({"t":"step","ts":1,"rank":2147483648})") << QStringLiteral("\"rank\"");
    QTest::newRow("rank far above INT_MAX")
        << QByteArray(R"({"t":"step","ts":1,"rank":9223372036854775807})")
        << QStringLiteral("\"rank\"");
}

void TestWorkerEvent::rejected()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, errorContains);
    QString error;
    const std::optional<WorkerEvent> ev = WorkerEvent::fromJson(json, &error);
    QVERIFY(!ev);
    QVERIFY2(error.contains(errorContains), qPrintable(error));
}

void TestWorkerEvent::rejectedWithoutErrorPointer()
{
    QVERIFY(!WorkerEvent::fromJson("nonsense"));
    QVERIFY(!WorkerEvent::fromJson(R"({"t":"party","ts":1,"rank":0})"));
    QVERIFY(WorkerEvent::fromJson(R"({"t":"step","ts":1,"rank":0})"));
}

// A hostile worker cannot make the launcher's messages (and logs) arbitrarily long.
void TestWorkerEvent::longUnknownTypeIsCutInTheMessage()
{
    const QByteArray type(100000, 'x');
    QString error;
    QVERIFY(!WorkerEvent::fromJson(R"({"t":")" + type + R"(","ts":1,"rank":0})", &error));
    QVERIFY2(error.size() < 200, qPrintable(error.left(300)));
    QVERIFY(error.contains(QString(64, u'x')));
}

// Time stamps and steps are 64-bit integers; doubles would lose the last digits above 2^53.
void TestWorkerEvent::bigIntegersStayExact()
{
    const WorkerEvent ev = parsed(
        R"({"t":"step","ts":9007199254740993,"rank":2147483647,"step":9223372036854775807,"pid":-9223372036854775807})");
    QVERIFY(ev.isValid());
    QCOMPARE(ev.timeUs(), Q_INT64_C(9007199254740993));
    QCOMPARE(ev.rank(), INT_MAX);
    QCOMPARE(ev.step(), std::numeric_limits<qint64>::max());
    QCOMPARE(ev.pid(), -std::numeric_limits<qint64>::max());
}

void TestWorkerEvent::integerField_data()
{
    QTest::addColumn<QByteArray>("value"); // JSON text of the "v" member; empty: no member
    QTest::addColumn<qint64>("expected");  // with default -77

    QTest::newRow("missing") << QByteArray() << qint64(-77);
    QTest::newRow("zero") << QByteArray("0") << qint64(0);
    QTest::newRow("negative") << QByteArray("-12") << qint64(-12);
    QTest::newRow("exponent form") << QByteArray("1e3") << qint64(1000);
    QTest::newRow("fraction truncates") << QByteArray("2.9") << qint64(2);
    QTest::newRow("negative fraction truncates") << QByteArray("-2.9") << qint64(-2);
    QTest::newRow("numeric string") << QByteArray(R"("42")") << qint64(42);
    QTest::newRow("string with spaces around") << QByteArray(R"(" 42 ")") << qint64(42);
    QTest::newRow("fractional string") << QByteArray(R"("4.5")") << qint64(-77);
    QTest::newRow("word") << QByteArray(R"("many")") << qint64(-77);
    QTest::newRow("empty string") << QByteArray(R"("")") << qint64(-77);
    QTest::newRow("string beyond int64") << QByteArray(R"("99999999999999999999")") << qint64(-77);
    QTest::newRow("bool") << QByteArray("true") << qint64(-77);
    QTest::newRow("null") << QByteArray("null") << qint64(-77);
    QTest::newRow("array") << QByteArray("[1]") << qint64(-77);
    QTest::newRow("object") << QByteArray(R"({"v":1})") << qint64(-77);
    QTest::newRow("beyond int64") << QByteArray("1e19") << qint64(-77);
    QTest::newRow("below int64") << QByteArray("-1e19") << qint64(-77);
    QTest::newRow("huge") << QByteArray("1e308") << qint64(-77);
    QTest::newRow("nan string") << QByteArray(R"("nan")") << qint64(-77);
}

void TestWorkerEvent::integerField()
{
    QFETCH(QByteArray, value);
    QFETCH(qint64, expected);
    const WorkerEvent ev = parsed(stepWith(value.isEmpty() ? QByteArray() : R"("v":)" + value));
    QVERIFY(ev.isValid());
    QCOMPARE(ev.integer("v", -77), expected);
}

void TestWorkerEvent::numberField_data()
{
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<double>("expected"); // with default -1.5

    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    QTest::newRow("missing") << QByteArray() << -1.5;
    QTest::newRow("double") << QByteArray("0.25") << 0.25;
    QTest::newRow("integer") << QByteArray("3") << 3.0;
    QTest::newRow("exponent") << QByteArray("1.5e-9") << 1.5e-9;
    QTest::newRow("nan string") << QByteArray(R"("nan")") << nan;
    QTest::newRow("inf string") << QByteArray(R"("inf")") << inf;
    QTest::newRow("-inf string") << QByteArray(R"("-inf")") << -inf;
    QTest::newRow("numeric string") << QByteArray(R"("2.5")") << 2.5;
    QTest::newRow("NaN as QString::toDouble reads it") << QByteArray(R"("NaN")") << nan;
    QTest::newRow("word") << QByteArray(R"("low")") << -1.5;
    QTest::newRow("empty string") << QByteArray(R"("")") << -1.5;
    QTest::newRow("bool") << QByteArray("false") << -1.5;
    QTest::newRow("null") << QByteArray("null") << -1.5;
    QTest::newRow("array") << QByteArray("[0.5]") << -1.5;
}

void TestWorkerEvent::numberField()
{
    QFETCH(QByteArray, value);
    QFETCH(double, expected);
    const WorkerEvent ev = parsed(stepWith(value.isEmpty() ? QByteArray() : R"("v":)" + value));
    QVERIFY(ev.isValid());
    const double got = ev.number("v", -1.5);
    if (std::isnan(expected)) {
        QVERIFY2(std::isnan(got), qPrintable(QString::number(got)));
    } else {
        QCOMPARE(got, expected);
    }
}

void TestWorkerEvent::stringField_data()
{
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<QString>("expected"); // with default "dflt"

    QTest::newRow("missing") << QByteArray() << QStringLiteral("dflt");
    QTest::newRow("string") << QByteArray(R"("hello")") << QStringLiteral("hello");
    QTest::newRow("empty string") << QByteArray(R"("")") << QString();
    QTest::newRow("escapes") << QByteArray(R"("a\"b\\c\nd\u00e9\ud83d\ude00")")
                             << QStringLiteral(u"a\"b\\c\nd\u00e9\U0001F600");
    QTest::newRow("NUL inside") << QByteArray(R"("a\u0000b")")
                                << (QStringLiteral("a") + QChar(u'\0') + QStringLiteral("b"));
    QTest::newRow("integer") << QByteArray("42") << QStringLiteral("42");
    QTest::newRow("double") << QByteArray("0.5") << QStringLiteral("0.5");
    QTest::newRow("true") << QByteArray("true") << QStringLiteral("true");
    QTest::newRow("false") << QByteArray("false") << QStringLiteral("false");
    QTest::newRow("null") << QByteArray("null") << QStringLiteral("dflt");
    QTest::newRow("array") << QByteArray(R"(["x"])") << QStringLiteral("dflt");
    QTest::newRow("object") << QByteArray(R"({"x":"y"})") << QStringLiteral("dflt");
}

void TestWorkerEvent::stringField()
{
    QFETCH(QByteArray, value);
    QFETCH(QString, expected);
    const WorkerEvent ev = parsed(stepWith(value.isEmpty() ? QByteArray() : R"("v":)" + value));
    QVERIFY(ev.isValid());
    QCOMPARE(ev.string("v", QStringLiteral("dflt")), expected);
}

void TestWorkerEvent::hasSeesNullMembers()
{
    const WorkerEvent ev = parsed(stepWith(R"("n":null,"z":0)"));
    QVERIFY(ev.has("n"));
    QVERIFY(ev.has("z"));
    QVERIFY(ev.has(wire::field::Type));
    QVERIFY(!ev.has("missing"));
    QVERIFY(!ev.has(""));
    QCOMPARE(ev.integer("n", 5), 5);
}

void TestWorkerEvent::shortcuts_data()
{
    QTest::addColumn<QByteArray>("extra");
    QTest::addColumn<qint64>("step");
    QTest::addColumn<double>("loss"); // NaN: expect NaN
    QTest::addColumn<qint64>("pid");
    QTest::addColumn<int>("port");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("message");

    const double nan = std::numeric_limits<double>::quiet_NaN();
    QTest::newRow("nothing") << QByteArray() << qint64(-1) << nan << qint64(0) << 0 << 1
                             << QString();
    QTest::newRow("all set")
        << QByteArray(
               R"("step":5,"loss":0.125,"pid":4321,"port":29500,"exit_code":3,"msg":"bad batch")")
        << qint64(5) << 0.125 << qint64(4321) << 29500 << 3 << QStringLiteral("bad batch");
    QTest::newRow("step zero and exit zero") << QByteArray(R"("step":0,"exit_code":0)") << qint64(0)
                                             << nan << qint64(0) << 0 << 0 << QString();
    QTest::newRow("as strings")
        << QByteArray(R"("step":"9","loss":"nan","pid":"77","port":"8080","exit_code":"2","msg":7)")
        << qint64(9) << nan << qint64(77) << 8080 << 2 << QStringLiteral("7");
    QTest::newRow("port 65535") << QByteArray(R"("port":65535)") << qint64(-1) << nan << qint64(0)
                                << 65535 << 1 << QString();
    QTest::newRow("port 65536") << QByteArray(R"("port":65536)") << qint64(-1) << nan << qint64(0)
                                << 0 << 1 << QString();
    QTest::newRow("port negative")
        << QByteArray(R"("port":-1)") << qint64(-1) << nan << qint64(0) << 0 << 1 << QString();
    QTest::newRow("port huge") << QByteArray(R"("port":4294967297)") << qint64(-1) << nan
                               << qint64(0) << 0 << 1 << QString();
    QTest::newRow("negative exit code") << QByteArray(R"("exit_code":-9)") << qint64(-1) << nan
                                        << qint64(0) << 0 << -9 << QString();
    QTest::newRow("exit code beyond int") << QByteArray(R"("exit_code":4294967296)") << qint64(-1)
                                          << nan << qint64(0) << 0 << 1 << QString();
    QTest::newRow("exit code below int") << QByteArray(R"("exit_code":-4294967296)") << qint64(-1)
                                         << nan << qint64(0) << 0 << 1 << QString();
    QTest::newRow("ill-typed")
        << QByteArray(R"("step":[1],"loss":{},"pid":true,"port":null,"exit_code":"x","msg":null)")
        << qint64(-1) << nan << qint64(0) << 0 << 1 << QString();
}

void TestWorkerEvent::shortcuts()
{
    QFETCH(QByteArray, extra);
    QFETCH(qint64, step);
    QFETCH(double, loss);
    QFETCH(qint64, pid);
    QFETCH(int, port);
    QFETCH(int, exitCode);
    QFETCH(QString, message);

    const WorkerEvent ev = parsed(stepWith(extra));
    QVERIFY(ev.isValid());
    QCOMPARE(ev.step(), step);
    if (std::isnan(loss))
        QVERIFY(std::isnan(ev.loss()));
    else
        QCOMPARE(ev.loss(), loss);
    QCOMPARE(ev.pid(), pid);
    QCOMPARE(ev.port(), port);
    QCOMPARE(ev.exitCode(), exitCode);
    QCOMPARE(ev.message(), message);
}

void TestWorkerEvent::defaultEventIsInvalidAndSafe()
{
    const WorkerEvent ev;
    QVERIFY(!ev.isValid());
    QCOMPARE(ev.type(), WorkerEvent::Type::Unknown);
    QCOMPARE(ev.typeName(), QStringLiteral("unknown"));
    QCOMPARE(ev.rank(), -1);
    QCOMPARE(ev.timeUs(), 0);
    QVERIFY(ev.json().isEmpty());
    QVERIFY(ev.fields().isEmpty());
    QVERIFY(!ev.has(wire::field::Type));
    QCOMPARE(ev.step(), -1);
    QVERIFY(std::isnan(ev.loss()));
    QCOMPARE(ev.pid(), 0);
    QCOMPARE(ev.port(), 0);
    QCOMPARE(ev.exitCode(), 1);
    QVERIFY(ev.message().isEmpty());
    QVERIFY(ev.host().isEmpty());
    QVERIFY(ev.stack().isEmpty());
}

void TestWorkerEvent::hostilePayloads_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<bool>("accepted");

    QTest::newRow("megabyte message")
        << stepWith(R"("msg":")" + QByteArray(1 << 20, 'm') + '"') << true;
    QTest::newRow("ten thousand fields") << [] {
        QByteArray extra;
        for (int i = 0; i < 10000; ++i)
            extra += (i ? "," : "") + QByteArray("\"f") + QByteArray::number(i) +
                     "\":" + QByteArray::number(i);
        return stepWith(extra);
    }() << true;
    QTest::newRow("deeply nested value")
        << stepWith(R"("x":)" + QByteArray(100000, '[') + QByteArray(100000, ']')) << false;
    QTest::newRow("invalid UTF-8 in a string") << stepWith("\"msg\":\"\xff\xfe\xc3\"") << false;
    QTest::newRow("lone surrogate escape") << stepWith(R"("msg":"\ud800")") << true;
    // The literal's own length (without its terminator): a count by hand read past its end.
    static const char withNul[] = "{\"t\":\"step\",\0\"ts\":1,\"rank\":0}";
    QTest::newRow("raw NUL byte") << QByteArray(withNul, sizeof withNul - 1) << false;
    QTest::newRow("leading BOM") << "\xef\xbb\xbf" + stepWith({}) << true;
    QTest::newRow("surrounding white space") << " \n\t" + stepWith({}) + "\r\n " << true;
}

// Nothing a worker sends may crash or hang the launcher; the outcome itself is Qt's JSON
// parser's, pinned here so that a change shows.
void TestWorkerEvent::hostilePayloads()
{
    QFETCH(QByteArray, json);
    QFETCH(bool, accepted);
    QString error;
    const std::optional<WorkerEvent> ev = WorkerEvent::fromJson(json, &error);
    QCOMPARE(bool(ev), accepted);
    if (ev) {
        QCOMPARE(ev->type(), WorkerEvent::Type::Step);
        QCOMPARE(ev->json(), json);
        // Accessors on whatever arrived stay defined.
        (void)ev->message();
        (void)ev->integer("x");
        (void)ev->number("x");
    } else {
        QVERIFY(!error.isEmpty());
    }
}

// Events travel between threads in queued signals, by value.
void TestWorkerEvent::copiesThroughQVariant()
{
    const WorkerEvent ev = parsed(stepWith(R"("step":3,"loss":0.5)"));
    const QVariant v = QVariant::fromValue(ev);
    QVERIFY(v.canConvert<WorkerEvent>());
    const WorkerEvent back = v.value<WorkerEvent>();
    QCOMPARE(back.type(), WorkerEvent::Type::Step);
    QCOMPARE(back.rank(), 2);
    QCOMPARE(back.step(), 3);
    QCOMPARE(back.loss(), 0.5);
    QCOMPARE(back.json(), ev.json());
}

QTEST_GUILESS_MAIN(TestWorkerEvent)
#include "tst_workerevent.moc"
