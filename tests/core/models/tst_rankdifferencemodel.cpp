// SPDX-License-Identifier: GPL-3.0-or-later
//
// RankDifferenceModel (issue 31): among 512 ranks, the few whose state, step or last line is
// not the majority's; checked on plain data (data-driven) and through a real LogStore, under
// QAbstractItemModelTester.
#include "models/rankdifferencemodel.h"
#include "store/logstore.h"
#include "stream/rankstream.h"

#include <QAbstractItemModelTester>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;

namespace {

// `world` running ranks at step 100 printing "step 100 loss 0.5", with the changes of `spec`:
// "rank:what" words, what = failed | hung | step=N | line=TEXT | finished.
void makeRun(int world, const QString &spec, QList<RankStatus> *ranks, QHash<int, QString> *lines)
{
    for (int r = 0; r < world; ++r) {
        RankStatus s;
        s.rank = r;
        s.host = u"node%1"_s.arg(r / 32);
        s.state = RankState::Running;
        s.step = 100 + (r % 3) - 1; // 99..101: a live run's spread
        *ranks << s;
        lines->insert(r, u"step %1 loss 0.%2"_s.arg(s.step).arg(r));
    }
    for (const QString &word : spec.split(u' ', Qt::SkipEmptyParts)) {
        const int r = word.section(u':', 0, 0).toInt();
        const QString what = word.section(u':', 1);
        RankStatus &s = (*ranks)[r];
        if (what == u"failed") {
            s.state = RankState::Failed;
            s.exitCode = 1;
        } else if (what == u"finished") {
            s.state = RankState::Finished;
        } else if (what == u"hung") {
            s.hung = true;
        } else if (what.startsWith(u"step=")) {
            s.step = what.mid(5).toLongLong();
        } else if (what.startsWith(u"line=")) {
            lines->insert(r, what.mid(5).replace(u'_', u' '));
        }
    }
}

} // namespace

class TestRankDifferenceModel : public QObject
{
    Q_OBJECT
private slots:
    void differences_data()
    {
        QTest::addColumn<int>("world");
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QStringList>("expected"); // "rank: how; how"
        QTest::newRow("all alike") << 512 << QString() << QStringList{};
        QTest::newRow("one failed, two hung, one behind, one other line")
            << 512 << u"17:failed 40:hung 41:hung 99:step=37 300:line=NCCL_WARN_timeout"_s
            << QStringList{u"17: failed (exit 1), most are running"_s,
                           u"40: hung, most are running"_s, u"41: hung, most are running"_s,
                           u"99: step 37, the median 100"_s, u"300: other last line"_s};
        // Ranks that do not wait for each other, started over a few seconds: steps 60–91 (the
        // median 75, its absolute deviation 9), two far behind. Only those two stand out.
        QTest::newRow("wide spread: only the far ones") << 64 << []() {
            QString spec;
            for (int r = 0; r < 64; ++r)
                spec += u"%1:step=%2 "_s.arg(r).arg(60 + r / 2);
            return spec + u"40:step=9 41:step=10"_s;
        }() << QStringList{u"40: step 9, the median 75"_s, u"41: step 10, the median 75"_s};
        QTest::newRow("ahead too")
            << 64 << u"5:step=140"_s << QStringList{u"5: step 140, the median 100"_s};
        QTest::newRow("no output") << 64 << u"7:line="_s << QStringList{u"7: no output"_s};
        QTest::newRow("no majority state: none stands out by state")
            << 4 << u"0:finished 1:finished"_s << QStringList{};
        QTest::newRow("signs and hex are numbers")
            << 64
            << u"8:line=step_100_loss_-0.25 9:line=step_100_loss_0x7f 10:line=step_7_loss_1.5"_s
            << QStringList{};
        QTest::newRow("one rank") << 1 << QString() << QStringList{};
        QTest::newRow("no ranks") << 0 << QString() << QStringList{};
    }
    void differences()
    {
        QFETCH(int, world);
        QFETCH(QString, spec);
        QFETCH(QStringList, expected);
        QList<RankStatus> ranks;
        QHash<int, QString> lines;
        makeRun(world, spec, &ranks, &lines);
        QStringList got;
        for (const RankDifference &d : RankDifferenceModel::differences(ranks, lines))
            got << u"%1: %2"_s.arg(d.rank).arg(d.how.join(u"; "_s));
        QCOMPARE(got, expected);

        RankDifferenceModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setDifferences(RankDifferenceModel::differences(ranks, lines));
        QCOMPARE(model.rowCount(), expected.size());
        for (int row = 0; row < model.rowCount(); ++row) {
            const int rank = model.data(model.index(row, 0), RankDifferenceModel::RankRole).toInt();
            QVERIFY(expected[row].startsWith(QString::number(rank) + u':'));
            QCOMPARE(model.data(model.index(row, RankDifferenceModel::LastLineColumn)).toString(),
                     lines.value(rank));
        }
        model.setDifferences({});
        QCOMPARE(model.rowCount(), 0);
    }

    void lastLinesFromTheStore()
    {
        // 32 ranks print the same progress; rank 9's last line is a warning.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        LogStore store;
        QString error;
        QVERIFY2(store.open(dir.path(), &error), qPrintable(error));
        QList<RankStatus> ranks;
        for (int r = 0; r < 32; ++r) {
            RankStream stream(r);
            QByteArray text = "epoch 1 step 10 loss 0.25\nepoch 1 step 11 loss 0.24\n";
            if (r == 9)
                text += "WARNING: NCCL watchdog timeout\n";
            store.append(stream.feed(StreamKind::Stdout, text).lines);
            RankStatus s;
            s.rank = r;
            s.state = RankState::Running;
            s.step = 11;
            ranks << s;
        }
        const QHash<int, QString> lines = RankDifferenceModel::lastLines(store);
        QCOMPARE(lines.size(), 32);
        QCOMPARE(lines.value(0), u"epoch 1 step 11 loss 0.24"_s);
        const QList<RankDifference> diff = RankDifferenceModel::differences(ranks, lines);
        QCOMPARE(diff.size(), 1);
        QCOMPARE(diff[0].rank, 9);
        QCOMPARE(diff[0].lastLine, u"WARNING: NCCL watchdog timeout"_s);
    }
};

QTEST_GUILESS_MAIN(TestRankDifferenceModel)
#include "tst_rankdifferencemodel.moc"
