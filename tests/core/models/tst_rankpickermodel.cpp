// SPDX-License-Identifier: GPL-3.0-or-later
//
// RankPickerModel (issue 31): 512 ranks narrowed by rank, range, host and state, under
// QAbstractItemModelTester while filters change and ranks change state.
#include "models/rankpickermodel.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;

namespace {

// 512 ranks on 16 hosts (node00..node15, 32 each); rank 17 failed (exit 1, root cause), ranks
// 40 and 41 hung, rank 300 failed by SIGSEGV, the rest running.
QList<RankStatus> run512()
{
    QList<RankStatus> out;
    for (int r = 0; r < 512; ++r) {
        RankStatus s;
        s.rank = r;
        s.host = u"node%1"_s.arg(r / 32, 2, 10, QLatin1Char('0'));
        s.state = RankState::Running;
        if (r == 17) {
            s.state = RankState::Failed;
            s.exitCode = 1;
            s.rootCause = true;
        } else if (r == 40 || r == 41) {
            s.hung = true;
        } else if (r == 300) {
            s.state = RankState::Failed;
            s.signal = 11;
        }
        out << s;
    }
    return out;
}

QList<int> shownRanks(const RankPickerModel &m)
{
    QList<int> out;
    for (int row = 0; row < m.rowCount(); ++row)
        out << m.data(m.index(row), RankPickerModel::RankRole).toInt();
    return out;
}

QList<int> range(int from, int to)
{
    QList<int> out;
    for (int r = from; r <= to; ++r)
        out << r;
    return out;
}

} // namespace

class TestRankPickerModel : public QObject
{
    Q_OBJECT
private slots:
    void filter_data()
    {
        QTest::addColumn<QString>("filter");
        QTest::addColumn<QList<int>>("ranks");
        QTest::newRow("empty: every rank") << QString() << range(0, 511);
        QTest::newRow("blank: every rank") << u"   "_s << range(0, 511);
        QTest::newRow("one rank") << u"17"_s << QList<int>{17};
        QTest::newRow("range, hyphen") << u"40-41"_s << QList<int>{40, 41};
        QTest::newRow("range, en dash") << u"40–42"_s << QList<int>{40, 41, 42};
        QTest::newRow("range, spaced") << u"40 - 41"_s << QList<int>{40, 41};
        QTest::newRow("list") << u"3, 7-9, 511"_s << QList<int>{3, 7, 8, 9, 511};
        QTest::newRow("reversed range") << u"9-7"_s << QList<int>{7, 8, 9};
        QTest::newRow("beyond the run") << u"600"_s << QList<int>{};
        QTest::newRow("host") << u"node01"_s << range(32, 63);
        QTest::newRow("host, any case") << u"NODE15"_s << range(480, 511);
        QTest::newRow("state: failed") << u"failed"_s << QList<int>{17, 300};
        QTest::newRow("state: prefix") << u"fail"_s << QList<int>{17, 300};
        QTest::newRow("hung") << u"hung"_s << QList<int>{40, 41};
        QTest::newRow("host and state") << u"node09 failed"_s << QList<int>{300};
        QTest::newRow("state among ranks") << u"failed 0-99"_s << QList<int>{17};
        QTest::newRow("nothing matches") << u"nosuchhost"_s << QList<int>{};
    }
    void filter()
    {
        QFETCH(QString, filter);
        QFETCH(QList<int>, ranks);
        RankPickerModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        m.setRanks(run512());
        m.setFilter(filter);
        QCOMPARE(shownRanks(m), ranks);
        QCOMPARE(m.totalRanks(), 512);
        for (int row = 0; row < ranks.size(); ++row) {
            QCOMPARE(m.rankAt(row), ranks[row]);
            QCOMPARE(m.rowOfRank(ranks[row]), row);
        }
        if (!ranks.contains(5))
            QCOMPARE(m.rowOfRank(5), -1);
    }

    void labels()
    {
        RankPickerModel m;
        m.setRanks(run512());
        m.setFilter(u"17, 40, 300, 5"_s);
        QCOMPARE(m.data(m.index(0)).toString(), u"Rank 5  node00  running"_s);
        QCOMPARE(m.data(m.index(1), RankPickerModel::LabelRole).toString(),
                 u"failed (exit 1, root cause)"_s);
        QCOMPARE(m.data(m.index(2), RankPickerModel::LabelRole).toString(), u"hung"_s);
        QCOMPARE(m.data(m.index(3), RankPickerModel::LabelRole).toString(), u"failed (SIGSEGV)"_s);
        QCOMPARE(m.data(m.index(3), RankPickerModel::HostRole).toString(), u"node09"_s);
    }

    void followsTheRun()
    {
        RankPickerModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        // Ranks join as they say hello, in any order.
        QList<RankStatus> ranks = run512();
        m.setRanks(ranks.mid(256));
        QCOMPARE(m.rowCount(), 256);
        QCOMPARE(m.rankAt(0), 256);
        m.setRanks(ranks);
        QCOMPARE(m.rowCount(), 512);
        QCOMPARE(m.rankAt(0), 0);

        // A state change inside the filter repaints that row only.
        QSignalSpy changed(&m, &QAbstractItemModel::dataChanged);
        QSignalSpy reset(&m, &QAbstractItemModel::modelReset);
        ranks[5].state = RankState::Finished;
        m.setRanks(ranks);
        QCOMPARE(reset.count(), 0);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(changed.first().at(0).toModelIndex().row(), 5);
        m.setRanks(ranks); // nothing changed: nothing emitted
        QCOMPARE(changed.count(), 1);

        // A rank that fails joins a "failed" filter.
        m.setFilter(u"failed"_s);
        QCOMPARE(shownRanks(m), (QList<int>{17, 300}));
        ranks[200].state = RankState::Failed;
        ranks[200].exitCode = 2;
        m.setRanks(ranks);
        QCOMPARE(shownRanks(m), (QList<int>{17, 200, 300}));
        m.setRanks({});
        QCOMPARE(m.rowCount(), 0);
    }

    void parseRanks_data()
    {
        QTest::addColumn<QString>("word");
        QTest::addColumn<bool>("ok");
        QTest::newRow("number") << u"17"_s << true;
        QTest::newRow("range") << u"1-3"_s << true;
        QTest::newRow("list") << u"1,3-4"_s << true;
        QTest::newRow("host") << u"node1"_s << false;
        QTest::newRow("dash alone") << u"-"_s << false;
        QTest::newRow("open range") << u"3-"_s << false;
        QTest::newRow("commas alone") << u",,"_s << false;
    }
    void parseRanks()
    {
        QFETCH(QString, word);
        QFETCH(bool, ok);
        QList<QPair<int, int>> ranges;
        QCOMPARE(RankPickerModel::parseRanks(word, &ranges), ok);
    }
};

QTEST_GUILESS_MAIN(TestRankPickerModel)
#include "tst_rankpickermodel.moc"
