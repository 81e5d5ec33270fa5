// SPDX-License-Identifier: GPL-3.0-or-later
//
// A runs folder of 1,000 records (issue 44, "A thousand runs"): the run list is filled a screen
// at a time, under QAbstractItemModelTester. The first fill reads the newest runs only, every run
// then arrives in the list in its place, and a record read after the first fill shows what its
// files say by then. The records are copies of one made by RunRecord::create(), each with its
// own id, name and start time, as bench/make_runs.py makes them from real runs. Nothing here
// times anything: the speed goals are bench/run's (runs1000).
#include "config/profile.h"
#include "config/trainingconfig.h"
#include "models/runlistmodel.h"
#include "record/runrecord.h"
#include "run/runmanager.h"

#include <QAbstractItemModelTester>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;

namespace {

constexpr int Runs = 1000;
constexpr qint64 FirstStartUs = 1'780'000'000'000'000; // June 2026
constexpr qint64 MinuteUs = 60'000'000;

QJsonObject readObject(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object()
                                       : QJsonObject();
}

bool writeObject(const QString &path, const QJsonObject &object)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(QJsonDocument(object).toJson()) > 0;
}

} // namespace

class TestRunListLazy : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_runs;
    QStringList m_idsNewestFirst;

    static QString idOf(int i)
    {
        const QDateTime at =
            QDateTime::fromMSecsSinceEpoch((FirstStartUs + i * MinuteUs) / 1000, Qt::UTC);
        return at.toString(u"yyyyMMdd-HHmmss"_s) +
               u"-sweep-%1-%2"_s.arg(i).arg(i % 7, 4, 16, QLatin1Char('0'));
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_runs = m_dir.filePath(u"runs"_s);
        QVERIFY(QDir().mkpath(m_runs));
        // The template: a finished two-rank run, written by the record's own code.
        const QString templateDir = m_dir.filePath(u"template"_s);
        QVERIFY(QDir().mkpath(templateDir));
        RunRecord record;
        TrainingConfig config;
        config.name = u"template"_s;
        config.program = {u"python"_s, u"train.py"_s};
        QString error;
        QVERIFY2(record.create(templateDir, u"template-run"_s, config.name,
                               Profile::builtinLocal(2), config, &error),
                 qPrintable(error));
        QJsonArray ranks;
        for (int r = 0; r < 2; ++r) {
            RankStatus s;
            s.rank = r;
            s.state = RankState::Finished;
            ranks << s.toJson();
        }
        QVERIFY(record.writeState({{u"state"_s, runStateName(RunState::Finished)},
                                   {u"world_size"_s, 2},
                                   {u"ranks"_s, ranks}}));
        const QString from = record.directory();
        const QJsonObject run = readObject(from + u"/run.json"_s);
        const QJsonObject state = readObject(from + u"/state.json"_s);
        QFile::copy(from + u"/profile.toml"_s, m_dir.filePath(u"profile.toml"_s));

        for (int i = 0; i < Runs; ++i) {
            const QString id = idOf(i);
            const QString dir = m_runs + u'/' + id;
            QVERIFY(QDir().mkdir(dir));
            const qint64 created = FirstStartUs + i * MinuteUs;
            QJsonObject r = run;
            r[u"id"_s] = id;
            r[u"name"_s] = u"sweep-%1"_s.arg(i);
            r[u"created_us"_s] = created;
            QJsonObject s = state;
            s[u"ended_us"_s] = created + 30'000'000;
            QVERIFY(writeObject(dir + u"/run.json"_s, r));
            QVERIFY(writeObject(dir + u"/state.json"_s, s));
            QVERIFY(QFile::copy(m_dir.filePath(u"profile.toml"_s), dir + u"/profile.toml"_s));
            m_idsNewestFirst.prepend(id);
        }
    }

    void firstFillReadsTheNewestThenEveryRunArrives()
    {
        RunManager manager(m_runs);
        RunListModel model(&manager);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy changed(&manager, &RunManager::historyChanged);

        // The first screen, newest first, and no more.
        QVERIFY(!manager.historyComplete());
        QCOMPARE(model.rowCount(), RunManager::FirstReadRuns);
        for (int row = 0; row < model.rowCount(); ++row)
            QCOMPARE(model.data(model.index(row, RunListModel::IdColumn)).toString(),
                     m_idsNewestFirst.at(row));

        // The oldest run is renamed on disk after that fill: were it read already, nothing would
        // read it again (a finished run is not followed), and the list would keep its old name.
        const QString oldest = m_runs + u'/' + m_idsNewestFirst.last();
        QJsonObject run = readObject(oldest + u"/run.json"_s);
        run[u"name"_s] = u"renamed-after-the-first-fill"_s;
        QVERIFY(writeObject(oldest + u"/run.json"_s, run));

        QTRY_VERIFY_WITH_TIMEOUT(manager.historyComplete(), 60000);
        QCOMPARE(model.rowCount(), Runs);
        // Read in several turns of the event loop, not all in one.
        QVERIFY2(changed.count() >= (Runs - RunManager::FirstReadRuns) / RunManager::ReadRunsEach,
                 qPrintable(u"%1 history changes"_s.arg(changed.count())));
        QStringList shown;
        for (int row = 0; row < model.rowCount(); ++row)
            shown << model.data(model.index(row, RunListModel::IdColumn)).toString();
        QCOMPARE(shown, m_idsNewestFirst);
        QCOMPARE(model.data(model.index(Runs - 1, RunListModel::NameColumn)).toString(),
                 u"renamed-after-the-first-fill"_s);
        QCOMPARE(model.rowOf(m_idsNewestFirst.constFirst()), 0);
    }

    void aRunThatComesWhileFillingTakesItsPlace()
    {
        RunManager manager(m_runs);
        RunListModel model(&manager);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(!manager.historyComplete());
        // Newer than every other: it goes first, once the watcher has seen its folder.
        const QString id = idOf(Runs);
        const QString dir = m_runs + u'/' + id;
        QVERIFY(QDir().mkdir(dir + u".making"_s));
        QJsonObject run = readObject(m_runs + u'/' + m_idsNewestFirst.first() + u"/run.json"_s);
        run[u"id"_s] = id;
        run[u"name"_s] = u"late"_s;
        run[u"created_us"_s] = FirstStartUs + Runs * MinuteUs;
        QVERIFY(writeObject(dir + u".making/run.json"_s, run));
        QVERIFY(QDir().rename(dir + u".making"_s, dir));

        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), Runs + 1, 60000);
        QTRY_VERIFY_WITH_TIMEOUT(manager.historyComplete(), 60000);
        QCOMPARE(model.data(model.index(0, RunListModel::IdColumn)).toString(), id);
        QVERIFY(QDir(dir).removeRecursively());
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), Runs, 60000);
    }

    // A run that comes or goes once the list is full is read (or dropped) alone: the thousand
    // finished runs are not read again each time. Seen from outside: a finished run changed on
    // disk behind the list's back keeps the name the list read first, while the new run shows.
    void aRunThatComesLaterIsReadAlone()
    {
        RunManager manager(m_runs);
        RunListModel model(&manager);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QTRY_VERIFY_WITH_TIMEOUT(manager.historyComplete(), 60000);
        const QString oldest = m_runs + u'/' + m_idsNewestFirst.last();
        const QJsonObject before = readObject(oldest + u"/run.json"_s);
        QJsonObject changed = before;
        changed[u"name"_s] = u"changed-behind-the-list"_s;
        QVERIFY(writeObject(oldest + u"/run.json"_s, changed));

        const QString id = idOf(Runs + 1);
        const QString dir = m_runs + u'/' + id;
        QVERIFY(QDir().mkdir(dir + u".making"_s));
        QJsonObject run = readObject(m_runs + u'/' + m_idsNewestFirst.first() + u"/run.json"_s);
        run[u"id"_s] = id;
        run[u"name"_s] = u"later"_s;
        run[u"created_us"_s] = FirstStartUs + (Runs + 1) * MinuteUs;
        QVERIFY(writeObject(dir + u".making/run.json"_s, run));
        QVERIFY(QDir().rename(dir + u".making"_s, dir));
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), Runs + 1, 60000);
        QCOMPARE(model.data(model.index(0, RunListModel::IdColumn)).toString(), id);
        QCOMPARE(model.data(model.index(Runs, RunListModel::NameColumn)).toString(),
                 before.value(u"name"_s).toString());

        // And a run that goes leaves the list; the others stay as they were.
        QVERIFY(QDir(dir).removeRecursively());
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), Runs, 60000);
        QCOMPARE(model.data(model.index(0, RunListModel::IdColumn)).toString(),
                 m_idsNewestFirst.first());
        QVERIFY(writeObject(oldest + u"/run.json"_s, before));
    }

    void scanListsRunsAndBrokenOnesInOnePass()
    {
        const QString broken = m_runs + u"/0-not-a-run"_s;
        QVERIFY(QDir().mkdir(broken));
        const RunRecord::Listing listing = RunRecord::scan(m_runs);
        QCOMPARE(listing.runs.size(), qsizetype(Runs));
        QCOMPARE(listing.broken.size(), qsizetype(1));
        QCOMPARE(listing.broken.constFirst().id, u"0-not-a-run"_s);
        QCOMPARE(listing.broken.constFirst().problem,
                 RunRecord::listBroken(m_runs).constFirst().problem);
        QCOMPARE(listing.runs.constFirst().id, m_idsNewestFirst.constFirst());
        QCOMPARE(listing.runs.constLast().id, m_idsNewestFirst.constLast());
        QVERIFY(QDir(broken).removeRecursively());
    }
};

QTEST_GUILESS_MAIN(TestRunListLazy)
#include "tst_runlistlazy.moc"
