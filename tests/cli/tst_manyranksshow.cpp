// SPDX-License-Identifier: GPL-3.0-or-later
//
// `show` and `runs` on a 512-rank record (issue 31): ranks that are alike as ranges, the few
// that stand out on lines of their own, --all-ranks one line per rank (in the rank table and
// where the ranks wait); a small run's `show` still lists each rank. The records are written here
// through RunRecord, as the launcher writes them: 512 ranks are a record's shape, not a launch this
// test needs.
#include "testprocesses.h"

#include "config/profile.h"
#include "config/trainingconfig.h"
#include "record/runrecord.h"
#include "record/runstatefile.h"

#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;

class TestManyRanksShow : public QObject
{
    Q_OBJECT

private:
    using Result = rankdeck::testing::CommandResult;

    QTemporaryDir m_home;
    QString m_cli;

    Result cli(const QStringList &args)
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"XDG_DATA_HOME"_s, m_home.path() + u"/data"_s);
        env.insert(u"XDG_CONFIG_HOME"_s, m_home.path() + u"/config"_s);
        return rankdeck::testing::runCommand(m_cli, args, env, 60000);
    }

    QString runsDir() const { return m_home.path() + u"/data/rankdeck/runs"_s; }

    // A failed run of `world` ranks: rank 17 (if there) the root cause, ranks 40 and 41 (if
    // there) hung, the rest finished at step 100 of 100 on 16 hosts.
    QString writeRun(const QString &id, int world, bool withStacks = false)
    {
        RunRecord record;
        QString error;
        TrainingConfig config;
        config.name = id;
        if (!record.create(runsDir(), id, id, Profile::builtinLocal(world), config, &error)) {
            qWarning() << error;
            return {};
        }
        RunStateFile state;
        state.id = id;
        state.name = id;
        state.state = RunState::Failed;
        state.createdUs = state.startedUs = 1'800'000'000'000'000;
        state.endedUs = state.startedUs + 90'000'000;
        for (int r = 0; r < world; ++r) {
            RankStatus s;
            s.rank = r;
            s.localRank = r % 32;
            s.host = u"node%1"_s.arg(r / 32, 2, 10, QLatin1Char('0'));
            s.pid = 10000 + r;
            s.state = RankState::Finished;
            s.step = 100;
            s.totalSteps = 100;
            s.startTimeUs = state.startedUs;
            s.endTimeUs = state.endedUs;
            if (r == 17 || (world < 17 && r == 1)) {
                s.state = RankState::Failed;
                s.exitCode = 1;
                s.step = 37;
                s.rootCause = true;
                s.detail = u"exit code 1"_s;
                state.rootCauseRank = r;
                state.rootCauseSummary = u"rank %1 exited with code 1"_s.arg(r);
            } else if (r == 40 || r == 41) {
                s.state = RankState::Stopped;
                s.hung = true;
                s.step = 52;
            }
            state.ranks << s;
        }
        if (withStacks) {
            // The hung ranks sleep; every other rank waits in Gloo's all_reduce.
            for (int r = 0; r < world; ++r)
                record.appendStacks(r, state.endedUs, u"dump-stacks"_s,
                                    r == 40 || r == 41
                                        ? u"thread 1 (main):\n#0 0x1 in clock_nanosleep"_s
                                        : u"thread 1 (main):\n#0 0x1 in "
                                          "c10d::ProcessGroupGloo::AsyncWork::wait()"_s);
        }
        if (!record.writeState(state.toJson(), &error)) {
            qWarning() << error;
            return {};
        }
        return id;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_home.isValid());
        const QString bin = qEnvironmentVariable("RANKDECK_BIN_DIR");
        QVERIFY2(!bin.isEmpty(), "RANKDECK_BIN_DIR is not set (run through ctest)");
        m_cli = bin + u"/rankdeck-cli"_s;
        QVERIFY2(QFileInfo(m_cli).isExecutable(), qPrintable(m_cli));
    }

    void showGroupsRanks()
    {
        const QString id = writeRun(u"20990101-000000-big"_s, 512);
        QVERIFY(!id.isEmpty());
        const Result show = cli({u"show"_s, id});
        QCOMPARE(show.code, 0);
        const QString ranks = show.out.section(u"\nRanks:\n"_s, 1).section(u"\n\n"_s, 0, 0);
        const QStringList lines = ranks.split(u'\n', Qt::SkipEmptyParts);
        // Three groups and the line that says how to see every rank, not 512 lines.
        QCOMPARE(lines.size(), 4);
        QVERIFY2(QRegularExpression(u"^  ranks 0–16, 18–39, 42–511 +finished  step 100/100  "
                                    "on 16 hosts$"_s)
                     .match(lines[0])
                     .hasMatch(),
                 qPrintable(show.out));
        QVERIFY2(
            QRegularExpression(u"^  ranks 40, 41 +stopped \\(hung\\)  step 52/100  on node01$"_s)
                .match(lines[1])
                .hasMatch(),
            qPrintable(show.out));
        QVERIFY2(QRegularExpression(u"^  rank 17 +failed \\(exit 1, root cause\\)  step 37/100  "
                                    "on node00  \\(exit code 1\\)$"_s)
                     .match(lines[2])
                     .hasMatch(),
                 qPrintable(show.out));
        QVERIFY2(lines[3].contains(u"512 ranks in 3 group(s)"_s) &&
                     lines[3].contains(u"--all-ranks"_s),
                 qPrintable(show.out));
        // The hung run's "where the ranks wait" (no stack dumps here): one entry, not 512.
        QVERIFY2(show.out.contains(u"\n  ranks 0–511: no stack dump\n"_s), qPrintable(show.out));
        QVERIFY2(!show.out.contains(u"rank 5: no stack dump"_s), qPrintable(show.out));
        // What comes after the ranks is still there.
        QVERIFY2(show.out.contains(u"Root cause: rank 17 exited with code 1"_s),
                 qPrintable(show.out));
    }

    void stackDumpsGrouped()
    {
        // Every rank dumped its stacks: two places, two entries, not 512.
        const QString id = writeRun(u"20990101-000005-bigstacks"_s, 512, true);
        QVERIFY(!id.isEmpty());
        const Result show = cli({u"show"_s, id});
        QCOMPARE(show.code, 0);
        const QString stacks =
            show.out
                .section(u"Last stack dumps (rankdeck-cli stacks RUN for the full stacks):\n"_s, 1)
                .section(u"\n\n"_s, 0, 0);
        const QStringList entries =
            stacks.split(u'\n', Qt::SkipEmptyParts).filter(QRegularExpression(u"^  \\S"_s));
        QCOMPARE(entries.size(), 2);
        QVERIFY2(entries[0].startsWith(u"  ranks 0–39, 42–511 at "_s) &&
                     entries[0].endsWith(u"(dump-stacks):"_s),
                 qPrintable(show.out));
        QVERIFY2(entries[1].startsWith(u"  ranks 40, 41 at "_s), qPrintable(show.out));
        // --all-ranks: each rank's entry.
        const Result all = cli({u"show"_s, u"--all-ranks"_s, id});
        QCOMPARE(all.code, 0);
        const QString allStacks =
            all.out
                .section(u"Last stack dumps (rankdeck-cli stacks RUN for the full stacks):\n"_s, 1)
                .section(u"\n\n"_s, 0, 0);
        QCOMPARE(allStacks.split(u'\n', Qt::SkipEmptyParts)
                     .filter(QRegularExpression(u"^  rank \\d+ at "_s))
                     .size(),
                 512);
    }

    void allRanksPrintsEachWaitingRank_data()
    {
        QTest::addColumn<bool>("allRanks");
        QTest::addColumn<QStringList>("entries"); // each entry's start, in order
        QTest::newRow("grouped") << false
                                 << QStringList{u"  ranks 0–39, 42–511: thread 1 (main)"_s,
                                                u"  ranks 40, 41: "_s};
        QStringList each;
        for (int r = 0; r < 512; ++r)
            each
                << (r == 40 || r == 41 ? u"  rank %1: "_s : u"  rank %1: thread 1 (main)"_s).arg(r);
        QTest::newRow("--all-ranks") << true << each;
    }

    void allRanksPrintsEachWaitingRank()
    {
        // The hung run's "where the ranks wait" (no collective verdict, every rank's stacks):
        // two places grouped, or with --all-ranks each rank's own line, as the rank table.
        QFETCH(bool, allRanks);
        QFETCH(QStringList, entries);
        const QString id = writeRun(u"20990101-00000%1-bigwait"_s.arg(allRanks ? 6 : 7), 512, true);
        QVERIFY(!id.isEmpty());
        QStringList args{u"show"_s};
        if (allRanks)
            args << u"--all-ranks"_s;
        const Result show = cli(args << id);
        QCOMPARE(show.code, 0);
        const QString waits =
            show.out.section(u"Where the ranks wait, by their last stacks:\n"_s, 1)
                .section(u"\n\n"_s, 0, 0);
        const QStringList lines =
            waits.split(u'\n', Qt::SkipEmptyParts).filter(QRegularExpression(u"^  \\S"_s));
        QCOMPARE(lines.size(), entries.size());
        for (qsizetype i = 0; i < entries.size(); ++i)
            QVERIFY2(lines[i].startsWith(entries[i]), qPrintable(lines[i]));
    }

    void allRanksPrintsEachRank()
    {
        const QString id = writeRun(u"20990101-000001-bigall"_s, 512);
        QVERIFY(!id.isEmpty());
        const Result show = cli({u"show"_s, u"--all-ranks"_s, id});
        QCOMPARE(show.code, 0);
        static const QRegularExpression rankLine(u"^  rank +(\\d+)  "_s,
                                                 QRegularExpression::MultilineOption);
        QList<int> seen;
        for (auto it = rankLine.globalMatch(show.out); it.hasNext();)
            seen << it.next().captured(1).toInt();
        QCOMPARE(seen.size(), 512);
        for (int r = 0; r < 512; ++r)
            QCOMPARE(seen[r], r);
        QVERIFY2(
            QRegularExpression(u"rank +17 .*failed .*<- root cause"_s).match(show.out).hasMatch(),
            qPrintable(show.out.left(4000)));
    }

    void smallRunListsEachRank()
    {
        // What fits a screen is printed as before, one line per rank.
        const QString id = writeRun(u"20990101-000002-small"_s, 4);
        QVERIFY(!id.isEmpty());
        const Result show = cli({u"show"_s, id});
        QCOMPARE(show.code, 0);
        QVERIFY2(
            QRegularExpression(u"rank +1 .*failed .*<- root cause"_s).match(show.out).hasMatch(),
            qPrintable(show.out));
        QVERIFY2(QRegularExpression(u"rank +3  node00 .*finished"_s).match(show.out).hasMatch(),
                 qPrintable(show.out));
        QVERIFY2(!show.out.contains(u"--all-ranks"_s), qPrintable(show.out));
    }

    void runsSummarisesBigRuns()
    {
        const QString big = writeRun(u"20990101-000003-bigruns"_s, 512);
        const QString small = writeRun(u"20990101-000004-smallruns"_s, 4);
        QVERIFY(!big.isEmpty() && !small.isEmpty());
        const Result runs = cli({u"runs"_s});
        QCOMPARE(runs.code, 0);
        const QStringList lines = runs.out.split(u'\n');
        const qsizetype bigRow = lines.indexOf(QRegularExpression(u"^"_s + big + u" .*"_s));
        QVERIFY2(bigRow > 0 && bigRow + 1 < lines.size(), qPrintable(runs.out));
        QCOMPARE(lines[bigRow + 1], u"    ranks 0–16, 18–39, 42–511 finished; ranks 40, 41 stopped "
                                    "(hung); rank 17 failed (exit 1, root cause)"_s);
        // A small run keeps its one row: its `show` lists its ranks.
        const qsizetype smallRow = lines.indexOf(QRegularExpression(u"^"_s + small + u" .*"_s));
        QVERIFY2(smallRow > 0 && smallRow + 1 < lines.size(), qPrintable(runs.out));
        QVERIFY2(!lines[smallRow + 1].startsWith(u"    "_s), qPrintable(runs.out));
    }
};

QTEST_GUILESS_MAIN(TestManyRanksShow)
#include "tst_manyranksshow.moc"
