// SPDX-License-Identifier: GPL-3.0-or-later
//
// The merged view's collapsing of identical lines (LogLineGroups, CollapsedLogModel) over a real
// LogStore and LogModel: which lines group, what a group row says, expanding and collapsing, live
// appends that update a row instead of adding one, the source's bounds (marker row, dropped and
// read-back lines), and that a rank's own view keeps every line.
#include "models/collapsedlogmodel.h"
#include "models/loglinegroups.h"
#include "models/logmodel.h"
#include "store/logstore.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;

namespace {

constexpr qint64 kBaseUs = 1'700'000'000'000'000;

LogLine makeLine(int rank, const QString &text, qint64 ms, StreamKind stream = StreamKind::Stdout)
{
    LogLine l;
    l.rank = rank;
    l.stream = stream;
    l.timeUs = kBaseUs + ms * 1000;
    l.text = text;
    l.raw = text.toUtf8();
    return l;
}

// "3@120:text" is rank 3 at 120 ms; a leading "E" puts it on stderr.
LogLine parseLine(QString spec)
{
    StreamKind stream = StreamKind::Stdout;
    if (spec.startsWith(QLatin1Char('E'))) {
        stream = StreamKind::Stderr;
        spec.remove(0, 1);
    }
    const qsizetype at = spec.indexOf(QLatin1Char('@'));
    const qsizetype colon = spec.indexOf(QLatin1Char(':'));
    return makeLine(spec.left(at).toInt(), spec.mid(colon + 1),
                    spec.mid(at + 1, colon - at - 1).toLongLong(), stream);
}

QStringList rowTexts(const QAbstractItemModel &m)
{
    QStringList out;
    for (int row = 0; row < m.rowCount(); ++row)
        out << m.index(row, 0).data().toString();
    return out;
}

// A store, the merged LogModel over it and the collapsed model over that, all under the tester.
struct Fixture
{
    explicit Fixture(const LogStore::Options &options = {}, int maxDistance = 256)
        : store(options), source(&store, LogStore::AllRanks)
    {
        source.setPollInterval(0);
        LogLineGroups::Options o;
        o.maxDistance = maxDistance;
        model.setOptions(o);
        model.setSourceModel(&source);
    }
    void append(const LogLine &line) { store.append(line); }
    void poll() { source.poll(); }

    LogStore store;
    LogModel source;
    CollapsedLogModel model;
    QAbstractItemModelTester sourceTester{&source,
                                          QAbstractItemModelTester::FailureReportingMode::QtTest};
    QAbstractItemModelTester tester{&model, QAbstractItemModelTester::FailureReportingMode::QtTest};
};

QString group(const QString &ranks, int n, const QString &text)
{
    return QStringLiteral("[%1 \u00d7%2] %3").arg(ranks).arg(n).arg(text);
}

} // namespace

class TestCollapsedLogModel : public QObject
{
    Q_OBJECT
private slots:
    void rankRanges_data();
    void rankRanges();
    void collapse_data();
    void collapse();
    void groupRowRoles();
    void expandAndCollapse_data();
    void expandAndCollapse();
    void liveAppendJoinsGroup_data();
    void liveAppendJoinsGroup();
    void joinsAroundAnOpenGroup();
    void droppedLinesTakeTheirEntries();
    void olderLinesGroupAbove();
    void filterChangeKeepsGroupsOpen();
    void perRankViewKeepsEveryLine();
    void detachedModelIsEmpty();
    void liveRowsPassThrough_data();
    void liveRowsPassThrough();
};

void TestCollapsedLogModel::rankRanges_data()
{
    QTest::addColumn<QList<int>>("ranks");
    QTest::addColumn<int>("maxRanges");
    QTest::addColumn<QString>("expected");
    QTest::newRow("one") << QList<int>{4} << 8 << QStringLiteral("r4");
    QTest::newRow("a run") << QList<int>{0, 1, 2, 3, 4, 5, 6, 7} << 8 << QStringLiteral("r0–7");
    QTest::newRow("two apart") << QList<int>{3, 9} << 8 << QStringLiteral("r3,9");
    QTest::newRow("runs and gaps")
        << QList<int>{0, 1, 2, 3, 5, 7, 8, 9} << 8 << QStringLiteral("r0–3,5,7–9");
    QTest::newRow("too many runs") << QList<int>{0, 2, 4, 6, 8} << 3 << QStringLiteral("r0,2,4,…");
    QTest::newRow("512 ranks") << [] {
        QList<int> r;
        for (int i = 0; i < 512; ++i)
            r << i;
        return r;
    }() << 8 << QStringLiteral("r0–511");
}

void TestCollapsedLogModel::rankRanges()
{
    QFETCH(QList<int>, ranks);
    QFETCH(int, maxRanges);
    QFETCH(QString, expected);
    const std::vector<int> sorted(ranks.begin(), ranks.end());
    QCOMPARE(LogLineGroups::rankRanges(sorted, maxRanges), expected);
}

void TestCollapsedLogModel::collapse_data()
{
    QTest::addColumn<QStringList>("lines");
    QTest::addColumn<int>("maxDistance");
    QTest::addColumn<QStringList>("rows");
    const QString a = QStringLiteral("NCCL INFO Bootstrap : Using eth0");
    QStringList eight;
    for (int r = 0; r < 8; ++r)
        eight << QStringLiteral("%1@%2:%3").arg(r).arg(r * 3).arg(a);
    QTest::newRow("8 ranks, the same line") << eight << 256 << QStringList{group(u"r0–7"_s, 8, a)};
    QTest::newRow("a single line keeps its plain prefix")
        << QStringList{QStringLiteral("5@0:hello")} << 256 << QStringList{u"[r5] hello"_s};
    QTest::newRow("outside the window: two rows")
        << QStringList{u"0@0:x"_s, u"1@10:x"_s, u"2@2500:x"_s, u"3@2600:x"_s} << 256
        << QStringList{group(u"r0–1"_s, 2, u"x"_s), group(u"r2–3"_s, 2, u"x"_s)};
    QTest::newRow("at the window's end: joins") << QStringList{u"0@0:x"_s, u"1@2000:x"_s} << 256
                                                << QStringList{group(u"r0–1"_s, 2, u"x"_s)};
    QTest::newRow("interleaved distinct lines")
        << QStringList{u"0@0:A"_s, u"0@0:B"_s, u"1@1:A"_s, u"1@1:B"_s,
                       u"2@2:A"_s, u"2@2:B"_s, u"3@3:C"_s}
        << 256
        << QStringList{group(u"r0–2"_s, 3, u"A"_s), group(u"r0–2"_s, 3, u"B"_s), u"[r3] C"_s};
    QTest::newRow("a rank repeating itself")
        << QStringList{u"0@0:epoch done"_s, u"0@5:epoch done"_s, u"1@9:epoch done"_s,
                       u"1@12:epoch done"_s}
        << 256
        << QStringList{group(u"r0–1"_s, 2, u"epoch done"_s), group(u"r0–1"_s, 2, u"epoch done"_s)};
    QTest::newRow("stdout and stderr stay apart")
        << QStringList{u"0@0:A"_s, u"E1@1:A"_s, u"E2@1:A"_s} << 256
        << QStringList{u"[r0] A"_s, group(u"r1–2"_s, 2, u"A"_s)};
    QTest::newRow("ranks out of order, with gaps")
        << QStringList{u"9@0:A"_s, u"8@0:A"_s, u"7@0:A"_s, u"5@0:A"_s,
                       u"3@0:A"_s, u"2@0:A"_s, u"1@0:A"_s, u"0@0:A"_s}
        << 256 << QStringList{group(u"r0–3,5,7–9"_s, 8, u"A"_s)};
    QTest::newRow("three entries between: joins")
        << QStringList{u"0@0:X"_s, u"0@0:a"_s, u"0@0:b"_s, u"0@0:c"_s, u"1@1:X"_s} << 4
        << QStringList{group(u"r0–1"_s, 2, u"X"_s), u"[r0] a"_s, u"[r0] b"_s, u"[r0] c"_s};
    QTest::newRow("four entries between: too far")
        << QStringList{u"0@0:X"_s, u"0@0:a"_s, u"0@0:b"_s, u"0@0:c"_s, u"0@0:d"_s, u"1@1:X"_s} << 4
        << QStringList{u"[r0] X"_s, u"[r0] a"_s, u"[r0] b"_s,
                       u"[r0] c"_s, u"[r0] d"_s, u"[r1] X"_s};
    QTest::newRow("collapsing off") << eight << 0 << [&] {
        QStringList rows;
        for (int r = 0; r < 8; ++r)
            rows << QStringLiteral("[r%1] %2").arg(r).arg(a);
        return rows;
    }();
}

void TestCollapsedLogModel::collapse()
{
    QFETCH(QStringList, lines);
    QFETCH(int, maxDistance);
    QFETCH(QStringList, rows);
    // All lines in one poll, one poll per line (each line meets rows views already know), and a
    // rebuild from the source: the same rows.
    for (const int mode : {0, 1, 2}) {
        Fixture f({}, maxDistance);
        for (const QString &spec : std::as_const(lines)) {
            f.append(parseLine(spec));
            if (mode == 1)
                f.poll();
        }
        f.poll();
        if (mode == 2)
            f.source.reload();
        QCOMPARE(rowTexts(f.model), rows);
        // Every line is in exactly one row.
        int lineCount = 0;
        for (int row = 0; row < f.model.rowCount(); ++row)
            lineCount += f.model.index(row, 0).data(LogModel::GroupSizeRole).toInt();
        QCOMPARE(lineCount, int(lines.size()));
        QCOMPARE(f.model.lineCount(), qint64(lines.size()));
        QCOMPARE(f.source.rowCount(), int(lines.size()));
    }
}

void TestCollapsedLogModel::groupRowRoles()
{
    Fixture f;
    for (int r = 7; r >= 0; --r)
        f.append(makeLine(r, u"NCCL INFO ready"_s, 100 + (7 - r) * 10, StreamKind::Stderr));
    f.poll();
    QCOMPARE(f.model.rowCount(), 1);
    const QModelIndex g = f.model.index(0, 0);
    QCOMPARE(g.data().toString(), group(u"r0–7"_s, 8, u"NCCL INFO ready"_s));
    QVERIFY(g.data(LogModel::IsGroupRole).toBool());
    QVERIFY(!g.data(LogModel::ExpandedRole).toBool());
    QVERIFY(!g.data(LogModel::IsGroupMemberRole).toBool());
    QVERIFY(!g.data(LogModel::IsMarkerRole).toBool());
    QCOMPARE(g.data(LogModel::GroupSizeRole).toInt(), 8);
    QCOMPARE(g.data(LogModel::RanksRole).toString(), u"r0–7"_s);
    QCOMPARE(g.data(LogModel::TextRole).toString(), u"NCCL INFO ready"_s);
    // The first line's rank, time and place; its lines' stream.
    QCOMPARE(g.data(LogModel::RankRole).toInt(), 7);
    QCOMPARE(g.data(LogModel::TimeRole).toLongLong(), kBaseUs + 100'000);
    QCOMPARE(g.data(LogModel::SequenceRole).toLongLong(), 0);
    QCOMPARE(g.data(LogModel::StreamRole).toInt(), 1);
    QCOMPARE(g.data(LogModel::CopyTextRole).toString(), g.data().toString());
    QVERIFY(g.data(Qt::ToolTipRole).toString().contains(u"70.0 ms"_s));
    QCOMPARE(f.model.groupCount(), 1);
    QCOMPARE(f.model.entryCount(), 1);
    QCOMPARE(f.model.joinedLines(), 7);
    // The source still has every line.
    QCOMPARE(f.source.rowCount(), 8);
}

void TestCollapsedLogModel::expandAndCollapse_data()
{
    QTest::addColumn<int>("maxRows"); // of the source: small ones put a marker row on top
    QTest::addColumn<int>("ranks");
    QTest::newRow("8 ranks") << 1000 << 8;
    QTest::newRow("8 ranks under the marker row") << 24 << 8;
    QTest::newRow("64 ranks") << 1000 << 64;
}

void TestCollapsedLogModel::expandAndCollapse()
{
    QFETCH(int, maxRows);
    QFETCH(int, ranks);
    Fixture f;
    f.source.setMaxRows(maxRows);
    // Filler that overflows small sources, then a group, a line, another group.
    for (int i = 0; i < 30; ++i)
        f.append(makeLine(0, QStringLiteral("filler %1").arg(i), 0));
    for (int r = 0; r < ranks; ++r)
        f.append(makeLine(r, u"A"_s, 10 + r));
    f.append(makeLine(0, u"solo"_s, 100));
    for (int r = 0; r < ranks; ++r)
        f.append(makeLine(r, u"B"_s, 200 + r));
    f.poll();
    const int marker = f.model.hasMarkerRow() ? 1 : 0;
    QCOMPARE(marker, f.source.hasMarkerRow() ? 1 : 0);
    QCOMPARE(bool(marker), maxRows < 30);
    const int rows = f.model.rowCount();
    const QString a = group(QStringLiteral("r0–%1").arg(ranks - 1), ranks, u"A"_s);
    const QString b = group(QStringLiteral("r0–%1").arg(ranks - 1), ranks, u"B"_s);
    const int aRow = rows - 3;
    QCOMPARE(f.model.index(aRow, 0).data().toString(), a);
    QCOMPARE(f.model.index(rows - 1, 0).data().toString(), b);

    QSignalSpy inserted(&f.model, &QAbstractItemModel::rowsInserted);
    QSignalSpy removed(&f.model, &QAbstractItemModel::rowsRemoved);
    // A single line and the marker do not expand.
    QVERIFY(!f.model.setData(f.model.index(rows - 2, 0), true, LogModel::ExpandedRole));
    if (marker)
        QVERIFY(!f.model.setData(f.model.index(0, 0), true, LogModel::ExpandedRole));
    QVERIFY(f.model.setData(f.model.index(aRow, 0), true, LogModel::ExpandedRole));
    QCOMPARE(f.model.rowCount(), rows + ranks);
    QCOMPARE(inserted.size(), 1);
    QCOMPARE(inserted.first().at(1).toInt(), aRow + 1);
    QCOMPARE(inserted.first().at(2).toInt(), aRow + ranks);
    QVERIFY(f.model.index(aRow, 0).data(LogModel::ExpandedRole).toBool());
    // Each line of the group in place, with its own rank and time.
    for (int r = 0; r < ranks; ++r) {
        const QModelIndex m = f.model.index(aRow + 1 + r, 0);
        QCOMPARE(m.data().toString(), QStringLiteral("[r%1] A").arg(r));
        QVERIFY(m.data(LogModel::IsGroupMemberRole).toBool());
        QCOMPARE(m.data(LogModel::RankRole).toInt(), r);
        QCOMPARE(m.data(LogModel::TimeRole).toLongLong(), kBaseUs + (10 + r) * 1000);
        QCOMPARE(m.data(LogModel::GroupSizeRole).toInt(), 1);
    }
    // Copying the expanded group gives every line.
    QCOMPARE(f.model.index(aRow, 0).data(LogModel::CopyTextRole).toString().count(u'\n'),
             ranks - 1);
    // What follows moved down, unchanged.
    QCOMPARE(f.model.index(aRow + ranks + 1, 0).data().toString(), u"[r0] solo"_s);
    QCOMPARE(f.model.index(rows + ranks - 1, 0).data().toString(), b);
    // The second group too, then both back.
    QVERIFY(f.model.setExpanded(rows + ranks - 1, true));
    QCOMPARE(f.model.rowCount(), rows + 2 * ranks);
    QCOMPARE(f.model.index(f.model.rowCount() - 1, 0).data().toString(),
             QStringLiteral("[r%1] B").arg(ranks - 1));
    QVERIFY(!f.model.setData(f.model.index(aRow + 1, 0), false, LogModel::ExpandedRole));
    QVERIFY(f.model.setData(f.model.index(aRow, 0), false, LogModel::ExpandedRole));
    QCOMPARE(f.model.rowCount(), rows + ranks);
    QCOMPARE(removed.size(), 1);
    QCOMPARE(removed.first().at(1).toInt(), aRow + 1);
    QVERIFY(f.model.setExpanded(rows - 1, false));
    QCOMPARE(f.model.rowCount(), rows);
    QCOMPARE(f.model.index(rows - 1, 0).data().toString(), b);
}

void TestCollapsedLogModel::liveAppendJoinsGroup_data()
{
    QTest::addColumn<bool>("expanded");
    QTest::newRow("collapsed group") << false;
    QTest::newRow("expanded group") << true;
}

void TestCollapsedLogModel::liveAppendJoinsGroup()
{
    QFETCH(bool, expanded);
    Fixture f;
    f.append(makeLine(0, u"NCCL INFO comm init"_s, 0));
    f.append(makeLine(1, u"NCCL INFO comm init"_s, 1));
    f.append(makeLine(0, u"other"_s, 2));
    f.poll();
    QCOMPARE(rowTexts(f.model),
             (QStringList{group(u"r0–1"_s, 2, u"NCCL INFO comm init"_s), u"[r0] other"_s}));
    if (expanded)
        QVERIFY(f.model.setExpanded(0, true));
    const int rows = f.model.rowCount();
    QSignalSpy inserted(&f.model, &QAbstractItemModel::rowsInserted);
    QSignalSpy changed(&f.model, &QAbstractItemModel::dataChanged);
    QSignalSpy reset(&f.model, &QAbstractItemModel::modelReset);
    // Two more ranks and a new line in one batch, as a timer tick brings them.
    f.append(makeLine(3, u"NCCL INFO comm init"_s, 40));
    f.append(makeLine(2, u"NCCL INFO comm init"_s, 41));
    f.append(makeLine(2, u"new"_s, 42));
    f.poll();
    QCOMPARE(reset.size(), 0);
    QCOMPARE(f.model.index(0, 0).data().toString(), group(u"r0–3"_s, 4, u"NCCL INFO comm init"_s));
    QVERIFY(!changed.isEmpty());
    QCOMPARE(changed.last().at(0).value<QModelIndex>().row(), 0);
    // Only the new line is a new row at the bottom; an expanded group shows the new lines below
    // its others.
    if (expanded) {
        QCOMPARE(f.model.rowCount(), rows + 3);
        QCOMPARE(inserted.size(), 3);
        QCOMPARE(inserted.at(0).at(1).toInt(), 3);
        QCOMPARE(inserted.at(1).at(1).toInt(), 4);
        QCOMPARE(f.model.index(3, 0).data().toString(), u"[r3] NCCL INFO comm init"_s);
        QCOMPARE(f.model.index(4, 0).data().toString(), u"[r2] NCCL INFO comm init"_s);
        QCOMPARE(f.model.index(5, 0).data().toString(), u"[r0] other"_s);
    } else {
        QCOMPARE(f.model.rowCount(), rows + 1);
        QCOMPARE(inserted.size(), 1);
    }
    QCOMPARE(inserted.last().at(1).toInt(), f.model.rowCount() - 1);
    QCOMPARE(f.model.index(f.model.rowCount() - 1, 0).data().toString(), u"[r2] new"_s);

    // A line that only joins: no row at all.
    inserted.clear();
    changed.clear();
    f.append(makeLine(4, u"NCCL INFO comm init"_s, 60));
    f.poll();
    QCOMPARE(inserted.size(), expanded ? 1 : 0);
    QCOMPARE(changed.size(), 1);
    QCOMPARE(f.model.index(0, 0).data().toString(), group(u"r0–4"_s, 5, u"NCCL INFO comm init"_s));
}

// One batch joins a group below an open one, then the open one (which moves the other down):
// the row announced as changed is where the other group is now.
void TestCollapsedLogModel::joinsAroundAnOpenGroup()
{
    Fixture f;
    for (const char *text : {"A", "B"})
        for (int r = 0; r < 2; ++r)
            f.append(makeLine(r, QString::fromLatin1(text), r));
    f.poll();
    QVERIFY(f.model.setExpanded(0, true));
    QCOMPARE(f.model.rowCount(), 4);
    QSignalSpy changed(&f.model, &QAbstractItemModel::dataChanged);
    f.append(makeLine(2, u"B"_s, 10));
    f.append(makeLine(2, u"A"_s, 11));
    f.poll();
    QCOMPARE(f.model.rowCount(), 5);
    QCOMPARE(f.model.index(4, 0).data().toString(), group(u"r0–2"_s, 3, u"B"_s));
    QCOMPARE(f.model.index(3, 0).data().toString(), u"[r2] A"_s);
    QCOMPARE(changed.size(), 1);
    QCOMPARE(changed.first().at(0).value<QModelIndex>().row(), 0);
    QCOMPARE(changed.first().at(1).value<QModelIndex>().row(), 4);
}

void TestCollapsedLogModel::droppedLinesTakeTheirEntries()
{
    Fixture f;
    f.source.setMaxRows(20);
    for (int step = 0; step < 30; ++step) {
        for (int r = 0; r < 4; ++r)
            f.append(makeLine(r, QStringLiteral("step %1").arg(step), step * 100 + r));
        f.append(makeLine(step % 4, QStringLiteral("loss %1").arg(step), step * 100 + 5));
        if (step == 3)
            QVERIFY(f.model.setExpanded(0, true)); // an open group that scrolls away
        f.poll();
    }
    QVERIFY(f.source.hasMarkerRow());
    QVERIFY(f.model.hasMarkerRow());
    QCOMPARE(f.model.index(0, 0).data().toString(), f.source.index(0, 0).data().toString());
    QCOMPARE(f.model.index(0, 0).data(LogModel::ElidedCountRole).toLongLong(),
             f.source.elidedCount());
    // Only entries whose first line the source still holds, and no more lines than it has.
    const qint64 firstKept = f.source.lineAt(0).sequence;
    int lines = 0;
    for (int row = 1; row < f.model.rowCount(); ++row) {
        const QModelIndex index = f.model.index(row, 0);
        QVERIFY(index.data(LogModel::SequenceRole).toLongLong() >= firstKept);
        QVERIFY(!index.data(LogModel::ExpandedRole).toBool());
        lines += index.data(LogModel::GroupSizeRole).toInt();
    }
    QVERIFY(lines <= f.source.lineRowCount());
    QVERIFY(lines >= f.source.lineRowCount() - 4);
    QCOMPARE(f.model.lineCount(), qint64(lines));
    QCOMPARE(f.model.index(f.model.rowCount() - 1, 0).data().toString(), u"[r1] loss 29"_s);
    QCOMPARE(f.model.index(f.model.rowCount() - 2, 0).data().toString(),
             group(u"r0–3"_s, 4, u"step 29"_s));
}

void TestCollapsedLogModel::olderLinesGroupAbove()
{
    QTemporaryDir dir;
    LogStore::Options o;
    o.windowAll = 16;
    Fixture f(o);
    QVERIFY(f.store.open(dir.path()));
    for (int step = 0; step < 10; ++step)
        for (int r = 0; r < 8; ++r)
            f.append(makeLine(r, QStringLiteral("step %1").arg(step), step * 100 + r));
    f.source.reload();
    QCOMPARE(f.source.lineRowCount(), 16);
    QCOMPARE(rowTexts(f.model).mid(1),
             (QStringList{group(u"r0–7"_s, 8, u"step 8"_s), group(u"r0–7"_s, 8, u"step 9"_s)}));
    QSignalSpy inserted(&f.model, &QAbstractItemModel::rowsInserted);
    QCOMPARE(f.source.fetchOlder(32), 32);
    QCOMPARE(inserted.size(), 1);
    QCOMPARE(inserted.first().at(1).toInt(), 1);
    QCOMPARE(rowTexts(f.model).mid(1, 2),
             (QStringList{group(u"r0–7"_s, 8, u"step 4"_s), group(u"r0–7"_s, 8, u"step 5"_s)}));
    // Everything back: the marker goes, and every line is in one row.
    QVERIFY(f.source.fetchOlder(1000) > 0);
    QVERIFY(!f.model.hasMarkerRow());
    QCOMPARE(f.model.rowCount(), 10);
    QCOMPARE(f.model.lineCount(), 80);
    QCOMPARE(f.model.index(0, 0).data().toString(), group(u"r0–7"_s, 8, u"step 0"_s));
    // Live lines still join the newest group.
    f.append(makeLine(0, u"done"_s, 2000));
    f.append(makeLine(1, u"done"_s, 2001));
    f.poll();
    QCOMPARE(f.model.rowCount(), 11);
    QCOMPARE(f.model.index(10, 0).data().toString(), group(u"r0–1"_s, 2, u"done"_s));
}

void TestCollapsedLogModel::filterChangeKeepsGroupsOpen()
{
    Fixture f;
    for (int r = 0; r < 4; ++r)
        f.append(makeLine(r, u"warning: slow"_s, r));
    for (int r = 0; r < 4; ++r)
        f.append(makeLine(r, u"info: fine"_s, 10 + r));
    f.poll();
    QVERIFY(f.model.setExpanded(0, true));
    QCOMPARE(f.model.rowCount(), 6);
    f.source.setFilterPattern(u"slow"_s);
    QCOMPARE(f.model.rowCount(), 5);
    QVERIFY(f.model.index(0, 0).data(LogModel::ExpandedRole).toBool());
    f.source.setFilterPattern(u"fine"_s);
    QCOMPARE(rowTexts(f.model), QStringList{group(u"r0–3"_s, 4, u"info: fine"_s)});
    // Gone from view, forgotten: showing it again shows it collapsed.
    f.source.setFilterPattern(QString());
    QCOMPARE(f.model.rowCount(), 2);
}

void TestCollapsedLogModel::perRankViewKeepsEveryLine()
{
    Fixture f;
    for (int i = 0; i < 3; ++i)
        for (int r = 0; r < 8; ++r)
            f.append(makeLine(r, u"same"_s, i * 3000 + r));
    f.poll();
    QCOMPARE(f.model.rowCount(), 3);
    QCOMPARE(f.source.rowCount(), 24);
    LogModel rank3(&f.store, 3);
    rank3.setPollInterval(0);
    QAbstractItemModelTester tester(&rank3, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(rowTexts(rank3), (QStringList{u"same"_s, u"same"_s, u"same"_s}));
    QCOMPARE(f.store.lineCount(3), 3);
}

void TestCollapsedLogModel::detachedModelIsEmpty()
{
    Fixture f;
    f.append(makeLine(0, u"x"_s, 0));
    f.poll();
    QCOMPARE(f.model.rowCount(), 1);
    f.model.setSourceModel(nullptr);
    QCOMPARE(f.model.rowCount(), 0);
    f.append(makeLine(1, u"x"_s, 1));
    f.poll();
    QCOMPARE(f.model.rowCount(), 0);
    f.model.setSourceModel(&f.source);
    QCOMPARE(rowTexts(f.model), QStringList{group(u"r0–1"_s, 2, u"x"_s)});
}

// Progress bars being redrawn (the source's live rows) come after the entries, never grouped,
// and change in place; lines that arrive meanwhile go above them and still group; a group
// opened or a line dropped at the top does not move them out of place.
void TestCollapsedLogModel::liveRowsPassThrough_data()
{
    QTest::addColumn<bool>("expanded");
    QTest::addColumn<bool>("bounded");
    QTest::newRow("collapsed") << false << false;
    QTest::newRow("a group open") << true << false;
    QTest::newRow("lines dropped at the top") << false << true;
}

void TestCollapsedLogModel::liveRowsPassThrough()
{
    QFETCH(bool, expanded);
    QFETCH(bool, bounded);
    Fixture f;
    if (bounded)
        f.source.setMaxRows(3);
    auto live = [](int rank, const QString &text, qint64 ms) {
        return RankStream::Live{rank, StreamKind::Stderr, kBaseUs + ms * 1000, text};
    };
    f.append(makeLine(0, u"NCCL INFO comm init"_s, 0));
    f.append(makeLine(1, u"NCCL INFO comm init"_s, 1));
    f.poll();
    if (expanded)
        QVERIFY(f.model.setExpanded(0, true));
    f.store.setLive(
        {live(0, u"Epoch 0:  10%|█ | 2/20"_s, 2), live(1, u"Epoch 0:   5%| | 1/20"_s, 3)});
    f.poll();
    QCOMPARE(f.model.liveRowCount(), 2);
    const int entries = f.model.rowCount() - 2;
    QCOMPARE(f.model.index(entries, 0).data().toString(), u"[r0] Epoch 0:  10%|█ | 2/20"_s);
    QVERIFY(f.model.index(entries + 1, 0).data(LogModel::IsLiveRole).toBool());
    QVERIFY(!f.model.setExpanded(entries, true));
    // Redrawn: the same rows, new text.
    QSignalSpy inserted(&f.model, &QAbstractItemModel::rowsInserted);
    QSignalSpy changed(&f.model, &QAbstractItemModel::dataChanged);
    f.store.setLive({live(1, u"Epoch 0:  50%|█████ | 10/20"_s, 4)});
    f.poll();
    QCOMPARE(inserted.size(), 0);
    QCOMPARE(changed.size(), 1);
    QCOMPARE(changed.first().at(0).value<QModelIndex>().row(), entries + 1);
    QCOMPARE(f.model.index(entries + 1, 0).data().toString(),
             u"[r1] Epoch 0:  50%|█████ | 10/20"_s);
    // Lines meanwhile: above the live rows, grouped as ever.
    f.append(makeLine(0, u"checkpoint saved"_s, 5));
    f.append(makeLine(1, u"checkpoint saved"_s, 6));
    f.append(makeLine(2, u"NCCL INFO comm init"_s, 7));
    f.poll();
    const QStringList rows = rowTexts(f.model);
    QCOMPARE(rows.last(), u"[r1] Epoch 0:  50%|█████ | 10/20"_s);
    QCOMPARE(rows.at(rows.size() - 2), u"[r0] Epoch 0:  10%|█ | 2/20"_s);
    QCOMPARE(rows.at(rows.size() - 3), group(u"r0–1"_s, 2, u"checkpoint saved"_s));
    // Rank 0's bar ended (its line is among the lines now), rank 1's goes on.
    f.store.setLive({live(0, QString(), 8)});
    f.append(makeLine(0, u"Epoch 0: 100%|██████████| 20/20"_s, 8));
    f.poll();
    QCOMPARE(f.model.liveRowCount(), 1);
    QCOMPARE(rowTexts(f.model).last(), u"[r1] Epoch 0:  50%|█████ | 10/20"_s);
    QCOMPARE(rowTexts(f.model).at(f.model.rowCount() - 2),
             u"[r0] Epoch 0: 100%|██████████| 20/20"_s);
    f.store.setLive({live(1, QString(), 9)});
    f.poll();
    QCOMPARE(f.model.liveRowCount(), 0);
    QVERIFY(!rowTexts(f.model).last().contains(u"50%"_s));
}

QTEST_GUILESS_MAIN(TestCollapsedLogModel)
#include "tst_collapsedlogmodel.moc"
