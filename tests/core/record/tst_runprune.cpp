// SPDX-License-Identifier: GPL-3.0-or-later
//
// Which runs `runs prune` and Delete may take: by age, by count or both, never one that may
// still be going; ages as people write them; a run's bytes on disk.
#include "record/runprune.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using namespace rankdeck;
using namespace Qt::StringLiterals;

namespace {

constexpr qint64 Day = 86'400'000'000;
constexpr qint64 Now = 100 * Day;

// "f3": finished 3 days ago; "r1": running 1 day ago, launcher alive; "g2": launcher gone (not
// detached) 2 days ago; "d5": detached 5 days ago, launcher gone.
RunInfo run(const QString &code)
{
    RunInfo i;
    i.id = code;
    i.createdUs = Now - code.mid(1).toLongLong() * Day;
    i.state = code.startsWith(u'f') ? RunState::Finished : RunState::Running;
    i.launcherGone = code.startsWith(u'g') || code.startsWith(u'd');
    i.detached = code.startsWith(u'd');
    return i;
}

} // namespace

class TestRunPrune : public QObject
{
    Q_OBJECT

private slots:
    void choose_data()
    {
        QTest::addColumn<QStringList>("runs"); // newest first
        QTest::addColumn<qint64>("olderThanUs");
        QTest::addColumn<int>("keep");
        QTest::addColumn<QStringList>("removed");
        const QStringList runs{u"f1"_s, u"r1"_s, u"g2"_s, u"f3"_s, u"d5"_s, u"f9"_s};
        QTest::newRow("older than 2 days")
            << runs << 2 * Day << -1 << QStringList{u"f3"_s, u"f9"_s};
        QTest::newRow("keep 2") << runs << qint64(0) << 2 << QStringList{u"g2"_s, u"f3"_s, u"f9"_s};
        // Runs that may still go are kept whatever is asked: keep 0 leaves r1 and d5.
        QTest::newRow("keep 0") << runs << qint64(0) << 0
                                << QStringList{u"f1"_s, u"g2"_s, u"f3"_s, u"f9"_s};
        QTest::newRow("both: either reason") << runs << 8 * Day << 4 << QStringList{u"f9"_s};
        QTest::newRow("nothing old") << runs << 30 * Day << -1 << QStringList{};
    }
    void choose()
    {
        QFETCH(QStringList, runs);
        QFETCH(qint64, olderThanUs);
        QFETCH(int, keep);
        QFETCH(QStringList, removed);
        QList<RunInfo> infos;
        for (const QString &code : runs)
            infos << run(code);
        const QList<RunPrune::Choice> choices = RunPrune::choose(infos, Now, olderThanUs, keep);
        QCOMPARE(choices.size(), runs.size());
        QStringList got;
        for (const RunPrune::Choice &c : choices) {
            QVERIFY(!c.reason.isEmpty());
            if (c.remove)
                got << c.run.id;
            // Running with its launcher, or detached: never, whatever is asked.
            if (c.run.id == u"r1"_s || c.run.id == u"d5"_s)
                QVERIFY2(!c.remove && c.reason.contains(u"still running"_s), qPrintable(c.reason));
        }
        QCOMPARE(got, removed);
    }

    void parseAge_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("ok");
        QTest::addColumn<qint64>("us");
        QTest::newRow("days") << u"7d"_s << true << 7 * Day;
        QTest::newRow("plain days") << u"2"_s << true << 2 * Day;
        QTest::newRow("hours") << u"12h"_s << true << qint64(12) * 3'600'000'000;
        QTest::newRow("minutes") << u"30m"_s << true << qint64(30) * 60'000'000;
        QTest::newRow("seconds") << u"90s"_s << true << qint64(90'000'000);
        QTest::newRow("fraction") << u"1.5d"_s << true << Day * 3 / 2;
        QTest::newRow("word") << u"week"_s << false << qint64(0);
        QTest::newRow("negative") << u"-1d"_s << false << qint64(0);
        QTest::newRow("huge") << u"99999999999d"_s << false << qint64(0);
    }
    void parseAge()
    {
        QFETCH(QString, text);
        QFETCH(bool, ok);
        QFETCH(qint64, us);
        qint64 got = 0;
        QCOMPARE(RunPrune::parseAge(text, &got), ok);
        if (ok)
            QCOMPARE(got, us);
    }

    void diskBytesCountsBlocksOfFilesNotLinks()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(QDir(dir.path()).mkpath(u"sub"_s));
        for (const auto &[name, size] : {std::pair{u"a.log"_s, 1000}, {u"sub/b.bin"_s, 24}}) {
            QFile f(dir.filePath(name));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray(size, 'x'));
        }
        QVERIFY(QFile::link(dir.filePath(u"a.log"_s), dir.filePath(u"link"_s)));
        // A file 1 MiB long with nothing written: its length is not disk use (a long run's
        // log keeps its length when its compressed part is freed).
        QFile sparse(dir.filePath(u"sparse.log"_s));
        QVERIFY(sparse.open(QIODevice::WriteOnly) && sparse.resize(1 << 20));
        sparse.close();
        qint64 blocks = 0;
        for (const QString &name : {u"a.log"_s, u"sub/b.bin"_s, u"sparse.log"_s}) {
            struct stat st
            {
            };
            QCOMPARE(::stat(QFile::encodeName(dir.filePath(name)).constData(), &st), 0);
            blocks += qint64(st.st_blocks) * 512;
        }
        QVERIFY(blocks >= 1024 && blocks < (1 << 20));
        QCOMPARE(RunPrune::diskBytes(dir.path()), blocks);
    }
};

QTEST_GUILESS_MAIN(TestRunPrune)
#include "tst_runprune.moc"
