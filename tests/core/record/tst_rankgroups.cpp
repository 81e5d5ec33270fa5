// SPDX-License-Identifier: GPL-3.0-or-later
//
// RankGroups: ranks that are alike as ranges, majority first (issue 31). Each row is a run's
// ranks as a short spec, what the summary says and how many groups it makes.
#include "record/rankgroups.h"

#include <QTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;

namespace {

// "F" finished, "X" failed (exit 1), "S" failed by SIGSEGV, "R" root cause (failed, exit 1),
// "H" running but hung, "T" stopped, "h" stopped and hung, "L" lost, "Q" silent, "P" pending:
// one letter per rank, rank i the i-th letter.
QList<RankStatus> ranksOf(const QString &spec)
{
    QList<RankStatus> out;
    for (int r = 0; r < spec.size(); ++r) {
        RankStatus s;
        s.rank = r;
        s.host = QStringLiteral("node%1").arg(r % 4); // hosts never split a group
        s.step = r;                                   // nor do steps
        switch (spec[r].toLatin1()) {
        case 'F':
            s.state = RankState::Finished;
            break;
        case 'X':
            s.state = RankState::Failed;
            s.exitCode = 1;
            break;
        case 'S':
            s.state = RankState::Failed;
            s.signal = 11;
            break;
        case 'R':
            s.state = RankState::Failed;
            s.exitCode = 1;
            s.rootCause = true;
            break;
        case 'H':
            s.state = RankState::Running;
            s.hung = true;
            break;
        case 'T':
            s.state = RankState::Stopped;
            s.signal = 15; // the launcher's SIGTERM: not a group of its own
            break;
        case 'h':
            s.state = RankState::Stopped;
            s.hung = true;
            break;
        case 'L':
            s.state = RankState::Lost;
            break;
        case 'Q':
            s.state = RankState::Running;
            s.silent = true;
            break;
        default:
            s.state = RankState::Pending;
        }
        out << s;
    }
    return out;
}

QString spec512()
{
    QString s(512, QLatin1Char('F'));
    s[17] = QLatin1Char('R');
    s[40] = QLatin1Char('H');
    s[41] = QLatin1Char('H');
    return s;
}

} // namespace

class TestRankGroups : public QObject
{
    Q_OBJECT
private slots:
    void ranges_data()
    {
        QTest::addColumn<QList<int>>("ranks");
        QTest::addColumn<int>("maxPieces");
        QTest::addColumn<QString>("expected");
        QTest::newRow("empty") << QList<int>{} << 0 << QString();
        QTest::newRow("one") << QList<int>{17} << 0 << u"17"_s;
        QTest::newRow("two apart") << QList<int>{40, 42} << 0 << u"40, 42"_s;
        QTest::newRow("a pair is two") << QList<int>{40, 41} << 0 << u"40, 41"_s;
        QTest::newRow("three make a range") << QList<int>{40, 41, 42} << 0 << u"40–42"_s;
        QTest::newRow("unsorted, duplicates")
            << QList<int>{9, 1, 3, 2, 8, 7, 5, 3, 12, 11} << 0 << u"1–3, 5, 7–9, 11, 12"_s;
        QTest::newRow("whole run") << QList<int>{0, 1, 2, 3} << 0 << u"0–3"_s;
        QTest::newRow("cut after two pieces")
            << QList<int>{0, 2, 4, 6, 8} << 2 << u"0, 2, … (5 ranks)"_s;
        QTest::newRow("limit not reached") << QList<int>{0, 2, 4} << 3 << u"0, 2, 4"_s;
    }
    void ranges()
    {
        QFETCH(QList<int>, ranks);
        QFETCH(int, maxPieces);
        QFETCH(QString, expected);
        QCOMPARE(RankGroups::ranges(ranks, maxPieces), expected);
    }

    void summary_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("expected");
        QTest::addColumn<int>("groups");
        QTest::newRow("all finished") << u"FFFF"_s << u"ranks 0–3 finished"_s << 1;
        QTest::newRow("single rank") << u"F"_s << u"rank 0 finished"_s << 1;
        QTest::newRow("no ranks") << QString() << QString() << 0;
        QTest::newRow("512: the issue's example")
            << spec512()
            << u"ranks 0–16, 18–39, 42–511 finished; ranks 40, 41 hung; "
               "rank 17 failed (exit 1, root cause)"_s
            << 3;
        QTest::newRow("exit codes and signals apart")
            << u"FXSXF"_s
            << u"ranks 0, 4 finished; ranks 1, 3 failed (exit 1); "
               "rank 2 failed (SIGSEGV)"_s
            << 3;
        QTest::newRow("root cause apart from its look-alikes")
            << u"XRXX"_s << u"ranks 0, 2, 3 failed (exit 1); rank 1 failed (exit 1, root cause)"_s
            << 2;
        QTest::newRow("stopped by the launcher: one group, no signal")
            << u"TTTT"_s << u"ranks 0–3 stopped"_s << 1;
        QTest::newRow("stopped hung ranks")
            << u"TThT"_s << u"ranks 0, 1, 3 stopped; rank 2 stopped (hung)"_s << 2;
        QTest::newRow("silent, lost, pending")
            << u"QQLP"_s << u"ranks 0, 1 silent; rank 2 lost; rank 3 pending"_s << 3;
        QTest::newRow("same size: by first rank")
            << u"XXFF"_s << u"ranks 0, 1 failed (exit 1); ranks 2, 3 finished"_s << 2;
    }
    void summary()
    {
        QFETCH(QString, spec);
        QFETCH(QString, expected);
        QFETCH(int, groups);
        const QList<RankGroup> g = RankGroups::group(ranksOf(spec));
        QCOMPARE(g.size(), groups);
        QCOMPARE(RankGroups::summary(g), expected);
        // Every rank is in exactly one group.
        qsizetype total = 0;
        for (const RankGroup &one : g)
            total += one.ranks.size();
        QCOMPARE(total, spec.size());
    }

    void longListsAreCut()
    {
        // Every other rank failed: 256 pieces would be a screen of numbers.
        QString spec;
        for (int r = 0; r < 512; ++r)
            spec += r % 2 ? QLatin1Char('X') : QLatin1Char('F');
        const QList<RankGroup> g = RankGroups::group(ranksOf(spec));
        QCOMPARE(g.size(), 2);
        QCOMPARE(g[0].text(4), u"ranks 0, 2, 4, 6, … (256 ranks) finished"_s);
        QCOMPARE(g[1].rankText(2), u"ranks 1, 3, … (256 ranks)"_s);
        QCOMPARE(g[1].rankText(0).count(u','), 255);
    }
};

QTEST_GUILESS_MAIN(TestRankGroups)
#include "tst_rankgroups.moc"
