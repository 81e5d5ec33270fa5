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
#include "frcases.h"

#include <QRegularExpression>
#include <QTest>

using namespace rankdeck;
using namespace rankdeck::testing;
using namespace Qt::StringLiterals;

namespace {

constexpr qint64 kSecond = 1'000'000'000;

struct Case
{
    QList<RankCollectiveInput> collective;
    QList<RankFailure> failures;
    QList<RankStatus> ranks;
};

// Every rank of ranks.txt (frcases.h's realCase()), and for a rank that died by itself ("died of
// SIGABRT before the dump") or printed a traceback, its failure as its files tell it, stamped in
// rank order (the abort first, the survivors' errors after).
Case fromFiles(const QString &name)
{
    Case c;
    c.collective = realCase(name);
    static const QRegularExpression died(uR"(^died of (SIG[A-Z]+))"_s);
    for (const RankCollectiveInput &in : std::as_const(c.collective)) {
        RankStatus status;
        status.rank = in.rank;
        status.host = u"node-a"_s;
        c.ranks << status;

        const QString log = QString::fromUtf8(sample(u"%1/rank_%2.log"_s.arg(name).arg(in.rank)));
        RankFailure f;
        f.rank = in.rank;
        f.host = status.host;
        if (const QRegularExpressionMatch d = died.match(in.noDumpReason); d.hasMatch()) {
            f.kind = u"signal"_s;
            f.signal = 6;
            f.signalName = d.captured(1);
            f.message = log.section(u'\n', 0, 1).trimmed();
            f.timeUs = 1'000'000;
        } else if (const QList<PythonException> chain = parsePythonTraceback(log);
                   !chain.isEmpty()) {
            f.kind = u"exit"_s;
            f.exitCode = 1;
            f.timeUs = 2'000'000 + in.rank;
            mergePython(&f, chain);
        } else {
            continue;
        }
        c.failures << f;
    }
    return c;
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
