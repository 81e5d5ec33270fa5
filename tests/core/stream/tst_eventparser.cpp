// SPDX-License-Identifier: GPL-3.0-or-later
#include "stream/eventparser.h"
#include "stream/rankstream.h"

#include "wire/wireprotocol.h"

#include <QRandomGenerator>
#include <QtTest>

#include <cmath>

using namespace rankdeck;
namespace wire = rankdeck::wire;

namespace {

QByteArray stepEvent(int rank, qint64 step, double loss, qint64 ts = 1700000000000000)
{
    wire::WireEventWriter w(wire::event::Step, rank, ts);
    w.addInt(wire::field::Step, step)
        .addDouble(wire::field::Loss, loss)
        .addDouble(wire::field::LearningRate, 0.01);
    const std::string line = w.line();
    return QByteArray(line.data(), qsizetype(line.size()));
}

QByteArray withoutNewline(QByteArray b)
{
    b.chop(1);
    return b;
}

// A marker with a correct CRC around any JSON text.
QByteArray forge(const QByteArray &json)
{
    char crc[9];
    std::snprintf(crc, sizeof crc, "%08x",
                  wire::crc32(std::string_view(json.constData(), size_t(json.size()))));
    return QByteArray(wire::kMarker.data(), qsizetype(wire::kMarker.size())) + crc + ' ' + json;
}

} // namespace

class TestEventParser : public QObject
{
    Q_OBJECT
private slots:
    void plainLineIsText();
    void parsesStepEvent();
    void textBeforeMarkerIsKept();
    void rejected_data();
    void rejected();
    void realEventAfterForgedMarker();
    void nanAndInfinity();
    void accessorsNeverFail();
    void everyWireTypeIsKnown_data();
    void everyWireTypeIsKnown();

    void streamByteByByte();
    void streamKeepsStdoutAndStderrApart();
    void streamMegabyteLine();
    void streamProgressBar();
    void streamLongProgressLine();
    void streamFinishFlushesPartialLine();
    void streamHostileBytesNeverLost();
};

void TestEventParser::plainLineIsText()
{
    const ParsedLine p = EventParser::parse("Rank 0: Epoch 1, Loss 0.5");
    QVERIFY(!p.event);
    QVERIFY(p.hasText);
    QVERIFY(!p.rejectedEvent);
    QCOMPARE(p.text, QByteArray("Rank 0: Epoch 1, Loss 0.5"));
}

void TestEventParser::parsesStepEvent()
{
    const ParsedLine p =
        EventParser::parse(withoutNewline(stepEvent(3, 42, 0.25, 1700000000123456)), 3);
    QVERIFY(p.event);
    QVERIFY(!p.hasText);
    QCOMPARE(p.event->type(), WorkerEvent::Type::Step);
    QCOMPARE(p.event->typeName(), QStringLiteral("step"));
    QCOMPARE(p.event->rank(), 3);
    QCOMPARE(p.event->timeUs(), 1700000000123456);
    QCOMPARE(p.event->step(), 42);
    QCOMPARE(p.event->loss(), 0.25);
    QCOMPARE(p.event->number(wire::field::LearningRate), 0.01);
    QVERIFY(p.event->json().startsWith('{'));
}

void TestEventParser::textBeforeMarkerIsKept()
{
    const ParsedLine p = EventParser::parse("abc" + withoutNewline(stepEvent(0, 1, 1.0)), 0);
    QVERIFY(p.event);
    QVERIFY(p.hasText);
    QCOMPARE(p.text, QByteArray("abc"));
}

void TestEventParser::rejected_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<int>("expectedRank");

    const QByteArray good = withoutNewline(stepEvent(1, 5, 0.5));
    QByteArray flipped = good;
    flipped[flipped.size() - 3] = flipped[flipped.size() - 3] == '5' ? '6' : '5';
    QTest::newRow("edited payload (crc mismatch)") << flipped << 1;
    QTest::newRow("torn event") << good.left(good.size() / 2) << 1;
    QTest::newRow("marker only") << QByteArray(wire::kMarker.data(),
                                               qsizetype(wire::kMarker.size()))
                                 << 1;
    QTest::newRow("bad hex") << QByteArray("\x1erdk1 zzzzzzzz {}") << 1;
    QTest::newRow("wrong rank") << good << 2;
    QTest::newRow("unknown type") << forge(R"({"t":"party","ts":1,"rank":1})") << 1;
    QTest::newRow("not json") << forge("not json at all") << 1;
    QTest::newRow("array") << forge("[1,2,3]") << 1;
    QTest::newRow("missing ts") << forge(R"({"t":"step","rank":1})") << 1;
    QTest::newRow("string rank") << forge(R"({"t":"step","ts":1,"rank":"1"})") << 1;
    QTest::newRow("negative rank") << forge(R"({"t":"step","ts":1,"rank":-4})") << -1;
    QTest::newRow("fractional ts") << forge(R"({"t":"step","ts":1.5,"rank":1})") << 1;
    QTest::newRow("nul in payload")
        << forge(QByteArray("{\"t\":\"step\",\0\"ts\":1,\"rank\":1}",
                            sizeof("{\"t\":\"step\",\0\"ts\":1,\"rank\":1}") - 1))
        << 1;
}

// A rejected event is shown as the log line it is: nothing disappears, nothing is trusted.
void TestEventParser::rejected()
{
    QFETCH(QByteArray, line);
    QFETCH(int, expectedRank);
    const ParsedLine p = EventParser::parse(line, expectedRank);
    QVERIFY(!p.event);
    QVERIFY(p.rejectedEvent);
    QVERIFY(!p.rejectReason.isEmpty());
    QVERIFY(p.hasText);
    QCOMPARE(p.text, line);
}

void TestEventParser::realEventAfterForgedMarker()
{
    const QByteArray line = "user \x1erdk1 deadbeef {fake}" + withoutNewline(stepEvent(0, 7, 2.0));
    const ParsedLine p = EventParser::parse(line, 0);
    QVERIFY(p.event);
    QCOMPARE(p.event->step(), 7);
    QCOMPARE(p.text, QByteArray("user \x1erdk1 deadbeef {fake}"));
    QVERIFY(p.rejectedEvent);
}

void TestEventParser::nanAndInfinity()
{
    wire::WireEventWriter w(wire::event::Step, 0, 1);
    w.addInt(wire::field::Step, 1)
        .addDouble(wire::field::Loss, std::nan(""))
        .addDouble(wire::field::LearningRate, HUGE_VAL)
        .addDouble(wire::field::SamplesPerSec, -HUGE_VAL);
    const ParsedLine p = EventParser::parse(withoutNewline(QByteArray::fromStdString(w.line())));
    QVERIFY(p.event);
    QVERIFY(std::isnan(p.event->loss()));
    QCOMPARE(p.event->number(wire::field::LearningRate), HUGE_VAL);
    QCOMPARE(p.event->number(wire::field::SamplesPerSec), -HUGE_VAL);
}

void TestEventParser::accessorsNeverFail()
{
    const auto ev =
        WorkerEvent::fromJson(R"({"t":"hello","ts":5,"rank":0,"pid":"x","port":99999,"host":7})");
    QVERIFY(ev);
    QCOMPARE(ev->type(), WorkerEvent::Type::Hello);
    QCOMPARE(ev->pid(), 0);
    QCOMPARE(ev->port(), 0); // out of range
    QCOMPARE(ev->host(), QStringLiteral("7"));
    QCOMPARE(ev->step(), -1);
    QVERIFY(std::isnan(ev->loss()));
    QCOMPARE(ev->exitCode(), 1);
    QCOMPARE(ev->string("nothing", QStringLiteral("dflt")), QStringLiteral("dflt"));
    QCOMPARE(ev->integer("nothing", 9), 9);
    QVERIFY(!ev->has("nothing"));
}

void TestEventParser::everyWireTypeIsKnown_data()
{
    QTest::addColumn<QString>("name");
    for (std::string_view t :
         {wire::event::Hello, wire::event::Store, wire::event::Rendezvous, wire::event::Step,
          wire::event::Heartbeat, wire::event::Checkpoint, wire::event::Stopping,
          wire::event::Finished, wire::event::Error, wire::event::Crash, wire::event::Stacks}) {
        const QString name = QString::fromLatin1(t.data(), qsizetype(t.size()));
        QTest::newRow(qPrintable(name)) << name;
    }
}

// Each event type of the wire header survives the round trip through the writer and the parser.
void TestEventParser::everyWireTypeIsKnown()
{
    QFETCH(QString, name);
    const WorkerEvent::Type type = WorkerEvent::typeFromName(name);
    QVERIFY(type != WorkerEvent::Type::Unknown);
    QCOMPARE(WorkerEvent::typeName(type), name);
    const std::string n = name.toStdString();
    wire::WireEventWriter w(n, 7, 123);
    std::string line = w.line();
    line.pop_back();
    const ParsedLine p = EventParser::parse(QByteArray::fromStdString(line), 7);
    QVERIFY(p.event);
    QCOMPARE(p.event->type(), type);
    QCOMPARE(p.event->timeUs(), 123);
}

// An event that lands in the middle of a line the program has not finished (events share its
// stdout) does not end that line: the program's bytes come out as it wrote them.
void TestEventParser::streamByteByByte()
{
    QByteArray input = "first line\n" + stepEvent(2, 1, 0.5) + "partial" + stepEvent(2, 2, 0.25) +
                       " and the rest\nlast\n";
    RankStream whole(2);
    const RankStream::Output a = whole.feed(StreamKind::Stdout, input, 1);
    RankStream bytes(2);
    RankStream::Output b;
    for (char c : input)
        bytes.feed(StreamKind::Stdout, QByteArrayView(&c, 1), b, 1);
    const RankStream::Output &bc = b;
    for (const RankStream::Output *o : {&a, &bc}) {
        QCOMPARE(o->events.size(), 2);
        QCOMPARE(o->events[0].step(), 1);
        QCOMPARE(o->events[1].step(), 2);
        QCOMPARE(o->lines.size(), 3);
        QCOMPARE(o->lines[0].text, QStringLiteral("first line"));
        QCOMPARE(o->lines[1].text, QStringLiteral("partial and the rest"));
        QCOMPARE(o->lines[1].raw, QByteArray("partial and the rest"));
        QCOMPARE(o->lines[2].text, QStringLiteral("last"));
        for (const LogLine &l : o->lines) {
            QCOMPARE(l.rank, 2);
            QVERIFY(!l.partial);
            QCOMPARE(l.timeUs, 1);
        }
    }
    QCOMPARE(whole.eventCount(), 2);
    QCOMPARE(whole.lineCount(), 3);
}

void TestEventParser::streamKeepsStdoutAndStderrApart()
{
    RankStream s(0);
    RankStream::Output out;
    s.feed(StreamKind::Stdout, "out-a", out, 1);
    s.feed(StreamKind::Stderr, "err-a\n", out, 2);
    s.feed(StreamKind::Stdout, "\n", out, 3);
    QCOMPARE(out.lines.size(), 2);
    QCOMPARE(out.lines[0].text, QStringLiteral("err-a"));
    QCOMPARE(out.lines[0].stream, StreamKind::Stderr);
    QCOMPARE(out.lines[1].text, QStringLiteral("out-a"));
    QCOMPARE(out.lines[1].stream, StreamKind::Stdout);
}

void TestEventParser::streamMegabyteLine()
{
    RankStream::Options o;
    o.maxPieceBytes = 100 * 1024;
    o.maxDisplayBytes = 1000;
    RankStream s(1, o);
    QByteArray big(5 * 1024 * 1024, 'm');
    big.prepend("HEAD");
    RankStream::Output out;
    // Fed in odd chunks, as a pipe would deliver it; an event follows on the same line.
    const QByteArray input = big + stepEvent(1, 9, 1.5) + "after\n";
    for (qsizetype off = 0; off < input.size(); off += 65531)
        s.feed(StreamKind::Stdout,
               QByteArrayView(input).sliced(off, qMin<qsizetype>(65531, input.size() - off)), out,
               1);
    QCOMPARE(out.events.size(), 1);
    QCOMPARE(out.events[0].step(), 9);
    QByteArray raw;
    int complete = 0;
    for (const LogLine &l : out.lines) {
        QVERIFY(l.raw.size() <= o.maxPieceBytes);
        raw += l.raw;
        if (!l.partial) {
            ++complete;
            raw += '\n';
        } else {
            QVERIFY(l.text.isEmpty());
        }
    }
    // The event's newline was not the program's: "after" goes on the same line.
    QCOMPARE(complete, 1);
    QVERIFY(raw == big + "after\n");
    const LogLine &last = *std::find_if(out.lines.begin(), out.lines.end(),
                                        [](const LogLine &l) { return !l.partial; });
    QVERIFY(last.truncated);
    QCOMPARE(last.byteLength, big.size() + 5);
    QVERIFY(last.text.startsWith(QStringLiteral("HEADmmm")));
    QVERIFY(last.text.size() < 1200);
    QVERIFY(last.text.contains(QString::number(big.size() + 5)));
}

void TestEventParser::streamProgressBar()
{
    RankStream s(0);
    RankStream::Output out = s.feed(
        StreamKind::Stderr, "epoch 1:  10%|#  |\repoch 1:  50%|## |\repoch 1: 100%|###|\n", 1);
    QCOMPARE(out.lines.size(), 1);
    QCOMPARE(out.lines[0].text, QStringLiteral("epoch 1: 100%|###|"));
    QVERIFY(out.lines[0].raw.contains("10%")); // the run record keeps every redraw
}

// A progress bar that redraws itself for longer than a piece: the view shows its last state,
// which is not cut (the earlier redraws are in the record, not missing from the view).
void TestEventParser::streamLongProgressLine()
{
    RankStream::Options o;
    o.maxPieceBytes = 1000;
    o.maxDisplayBytes = 100;
    RankStream s(0, o);
    QByteArray input;
    for (int i = 0; i < 500; ++i)
        input += "progress " + QByteArray::number(i) + "%\r";
    input += "done\r\n";
    RankStream::Output out;
    for (qsizetype off = 0; off < input.size(); off += 97)
        s.feed(StreamKind::Stderr,
               QByteArrayView(input).sliced(off, qMin<qsizetype>(97, input.size() - off)), out, 1);
    QVERIFY(out.lines.size() > 2);
    QByteArray raw;
    for (const LogLine &l : out.lines)
        raw += l.raw;
    QVERIFY(raw + '\n' == input);
    const LogLine &last = out.lines.last();
    QVERIFY(!last.partial);
    QCOMPARE(last.text, QStringLiteral("done"));
    QVERIFY(!last.truncated);
    QCOMPARE(last.byteLength, input.size() - 1);
    // Every redraw that a later one replaced came out once, for the metrics.
    QCOMPARE(out.redraws.size(), 500);
    QCOMPARE(out.redraws.first().text, QStringLiteral("progress 0%"));
    QCOMPARE(out.redraws.last().text, QStringLiteral("progress 499%"));
}

void TestEventParser::streamFinishFlushesPartialLine()
{
    RankStream s(0);
    RankStream::Output out;
    s.feed(StreamKind::Stdout, "no newline at exit", out, 1);
    QVERIFY(out.lines.isEmpty());
    s.finish(out, 2);
    QCOMPARE(out.lines.size(), 1);
    QCOMPARE(out.lines[0].text, QStringLiteral("no newline at exit"));
    QVERIFY(!out.lines[0].partial);
}

// Random binary garbage with forged markers, NULs and '\r': never a crash, never a forged event,
// and every byte comes out again.
void TestEventParser::streamHostileBytesNeverLost()
{
    QRandomGenerator rng(42);
    QByteArray input;
    for (int i = 0; i < 3000; ++i) {
        switch (rng.bounded(6)) {
        case 0:
            input += "\x1erdk1 ";
            break;
        case 1:
            input += QByteArray(1, '\0');
            break;
        case 2:
            input += '\n';
            break;
        case 3:
            input += '\r';
            break;
        default:
            for (int k = 0; k < 20; ++k)
                input += char(rng.bounded(256));
        }
    }
    input += '\n';
    RankStream::Options o;
    o.maxPieceBytes = 512;
    RankStream s(0, o);
    RankStream::Output out;
    for (qsizetype off = 0; off < input.size();) {
        const qsizetype n = qMin<qsizetype>(input.size() - off, 1 + rng.bounded(300));
        s.feed(StreamKind::Stdout, QByteArrayView(input).sliced(off, n), out, 1);
        off += n;
    }
    s.finish(out, 1);
    QVERIFY(out.events.isEmpty());
    QByteArray raw;
    for (const LogLine &l : out.lines) {
        raw += l.raw;
        if (!l.partial)
            raw += '\n';
    }
    QVERIFY(raw == input);
    QVERIFY(s.rejectedEvents() > 0);
}

QTEST_GUILESS_MAIN(TestEventParser)
#include "tst_eventparser.moc"
