// SPDX-License-Identifier: GPL-3.0-or-later
//
// Issue 39: a failure report and a collective verdict built from a run's files alone, through
// core/diagnosis/'s public headers, with no RunController, transport or event loop: what `show`
// or a second GUI does with a record another process wrote. The files are the real Gloo cases of
// data/fr/ (torch 2.14.1): each rank's flight-recorder JSON, its faulthandler dump, its output,
// and ranks.txt (who died of what).
#include "diagnosis/collectiveverdict.h"
#include "diagnosis/failureverdict.h"
#include "diagnosis/pythonfailure.h"

#include <QFile>
#include <QRegularExpression>
#include <QTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;

namespace {

constexpr qint64 kSecond = 1'000'000'000;

QByteArray read(const QString &name)
{
    QFile f(QStringLiteral(RANKDECK_FR_DATA "/") + name);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("missing test data %s", qPrintable(name));
    return f.readAll();
}

// The main thread's innermost frame of the user's own code, from the rank's faulthandler dump.
QString whereFromStack(const QString &text)
{
    for (const PythonThreadStack &t : parseFaultHandlerDump(text).threads) {
        if (t.current || t.frames.isEmpty())
            continue;
        const int own = innermostUserFrame(t.frames);
        const PythonFrame &f = t.frames[own >= 0 ? own : 0];
        return u"%1:%2 in %3"_s.arg(f.file.section(u'/', -1)).arg(f.line).arg(f.function);
    }
    return {};
}

struct Case
{
    QList<RankCollectiveInput> collective;
    QList<RankFailure> failures;
    QList<RankStatus> ranks;
};

// Every rank of ranks.txt: its dump and where it waits, and for a rank that died by itself
// ("died of SIGABRT before the dump") or printed a traceback, its failure as the files tell it,
// stamped in rank order (the abort first, the survivors' errors after).
Case fromFiles(const QString &name)
{
    Case c;
    static const QRegularExpression line(uR"(^rank (\d+): (.*); dump: (yes|no)$)"_s);
    static const QRegularExpression died(uR"(died of (SIG[A-Z]+))"_s);
    for (const QString &l : QString::fromUtf8(read(name + u"/ranks.txt"_s)).split(u'\n')) {
        const QRegularExpressionMatch m = line.match(l);
        if (!m.hasMatch())
            continue;
        const int r = m.captured(1).toInt();
        const QString file = u"%1/rank_%2"_s.arg(name).arg(r);
        RankCollectiveInput in;
        in.rank = r;
        in.alive = m.captured(2).startsWith(u"alive"_s);
        if (m.captured(3) == u"yes"_s) {
            in.dump = FlightRecorderDump::parse(read(file + u".json"_s), &in.noDumpReason);
            in.where = whereFromStack(QString::fromUtf8(read(file + u".stack.txt"_s)));
        } else {
            in.noDumpReason = m.captured(2);
        }
        c.collective << in;

        RankStatus status;
        status.rank = r;
        status.host = u"node-a"_s;
        c.ranks << status;

        const QString log = QString::fromUtf8(read(file + u".log"_s));
        RankFailure f;
        f.rank = r;
        f.host = status.host;
        if (const QRegularExpressionMatch d = died.match(m.captured(2)); d.hasMatch()) {
            f.kind = u"signal"_s;
            f.signal = 6;
            f.signalName = d.captured(1);
            f.message = log.section(u'\n', 0, 1).trimmed();
            f.timeUs = 1'000'000;
        } else if (const QList<PythonException> chain = parsePythonTraceback(log);
                   !chain.isEmpty()) {
            f.kind = u"exit"_s;
            f.exitCode = 1;
            f.timeUs = 2'000'000 + r;
            mergePython(&f, chain);
        } else {
            continue;
        }
        c.failures << f;
    }
    return c;
}

qint64 lastCreatedNs(const QList<RankCollectiveInput> &ranks)
{
    qint64 last = 0;
    for (const RankCollectiveInput &r : ranks)
        for (const FlightRecorderEntry &e : r.dump.entries)
            last = qMax(last, e.timeCreatedNs);
    return last;
}

QStringList kinds(const FailureReport &report)
{
    QStringList out;
    for (const RankFailure &f : report.failures)
        out << u"%1:%2"_s.arg(f.rank).arg(f.kind);
    out.sort();
    return out;
}

} // namespace

class TestDiagnosisFromFiles : public QObject
{
    Q_OBJECT

private slots:
    void rootCauseFromFiles_data()
    {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<bool>("useRecorder");
        QTest::addColumn<int>("rootRank");
        QTest::addColumn<QString>("rootKind");
        QTest::addColumn<QStringList>("kinds");
        QTest::addColumn<QString>("summaryStart");

        // Rank 2 all_reduced 264 floats where the others gave 256; Gloo aborted rank 1, and the
        // survivors saw their connections reset. By time alone rank 1's abort comes first; the
        // recorder's verdict names rank 2 (its own connection reset is folded into that entry),
        // and every other failure is a consequence.
        QTest::newRow("size mismatch, with the dumps")
            << u"sizemismatch"_s << true << 2 << u"collective"_s
            << QStringList{u"0:consequence"_s, u"1:consequence"_s, u"2:collective"_s,
                           u"3:consequence"_s}
            << u"rank 2 (node-a): "_s;
        QTest::newRow("size mismatch, without the dumps")
            << u"sizemismatch"_s << false << 1 << u"signal"_s
            << QStringList{u"0:consequence"_s, u"1:signal"_s, u"2:consequence"_s,
                           u"3:consequence"_s}
            << u"rank 1 (node-a): SIGABRT"_s;
        // Rank 3 sleeps while ranks 0-2 wait in all_reduce #6: nobody failed, the recorder alone
        // names the root cause.
        QTest::newRow("missing rank") << u"missing"_s << true << 3 << u"collective"_s
                                      << QStringList{u"3:collective"_s} << u"rank 3 (node-a): "_s;
    }

    void rootCauseFromFiles()
    {
        QFETCH(QString, folder);
        QFETCH(bool, useRecorder);
        QFETCH(int, rootRank);
        QFETCH(QString, rootKind);
        QFETCH(QStringList, kinds);
        QFETCH(QString, summaryStart);

        const Case c = fromFiles(folder);
        QVERIFY(!c.collective.isEmpty());
        const CollectiveVerdict collective =
            CollectiveVerdict::compute(c.collective, lastCreatedNs(c.collective) + 12 * kSecond);
        const FailureVerdict verdict = FailureVerdict::judge(
            c.failures, useRecorder ? &collective : nullptr, 3'000'000, c.ranks, {});

        const RankFailure *root = verdict.report().rootCause();
        QVERIFY2(root, qPrintable(verdict.report().toText()));
        QCOMPARE(root->rank, rootRank);
        QCOMPARE(root->kind, rootKind);
        QCOMPARE(verdict.rootCauseRank(), rootRank);
        QVERIFY2(::kinds(verdict.report()) == kinds,
                 qPrintable(::kinds(verdict.report()).join(u", "_s)));
        const QString summary = FailureVerdict::summaryOf(verdict.report());
        QVERIFY2(summary.startsWith(summaryStart), qPrintable(summary));
        if (useRecorder)
            QVERIFY2(root->message.startsWith(collective.headline()), qPrintable(root->message));
    }
};

QTEST_GUILESS_MAIN(TestDiagnosisFromFiles)
#include "tst_diagnosisfromfiles.moc"
