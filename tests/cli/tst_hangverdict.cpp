// SPDX-License-Identifier: GPL-3.0-or-later
//
// Why the job is stuck (issue 26), end to end through rankdeck-cli with real ranks: a user's
// Gloo program (tests/cli/programs/collectives.py, the torch venv's Python) or the built-in
// worker whose ranks part at a collective. For each case the launcher must collect the living
// ranks' flight recorders and name the culprit: in state.json (the verdict), at the top of
// `show` and `stacks`, in `show --json`, in the root-cause column of `runs` (also after the hung
// run was stopped), and in failure.json when a desync made a rank crash (the culprit is the root
// cause, the crashed rank a victim). A desync must be named before the hang watch fires. Torch's
// own analyser (fr_trace), run on the dumps `export --flight-recorder` writes out of the record,
// must agree on the missing ranks and on the mismatch. Bad input: a rank holding the GIL, a rank
// whose dump is garbage, recording turned off: the report says which rank gave no dump and why,
// or falls back to the stacks and says why. One case also runs on 2 sshd nodes.
#include "config/profile.h"
#include "config/profilestore.h"
#include "fixtureprofile.h"
#include "sshfixture.h"
#include "testprocesses.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cstring>

using namespace rankdeck;
using namespace Qt::StringLiterals;

class TestHangVerdict : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void verdicts_data();
    void verdicts();

private:
    using Result = testing::CommandResult;

    Result cli(const QStringList &args, int timeoutMs = 240000) const
    {
        return testing::runCommand(m_cli, args, QProcessEnvironment::systemEnvironment(),
                                   timeoutMs);
    }
    QString runDirectory(const QString &name) const
    {
        const QStringList dirs = QDir(m_runsDir).entryList({u"*-"_s + name + u"-*"_s}, QDir::Dirs);
        return dirs.size() == 1 ? m_runsDir + u'/' + dirs.first() : QString();
    }
    // torch's analyser on a folder of rank_<r> pickles.
    // torch's analyser on a folder of rank_<r> pickles (with the flags export said it needs).
    QString frTrace(const QString &folder, const QStringList &flags, int *code) const
    {
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(m_python, QStringList{u"-m"_s, u"torch.distributed.flight_recorder.fr_trace"_s,
                                      folder, u"--prefix"_s, u"rank_"_s} +
                              flags);
        if (!p.waitForFinished(180000))
            p.kill();
        *code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
        return QString::fromUtf8(p.readAll());
    }

    SshFixture m_ssh;
    QString m_sshWhy;
    QTemporaryDir m_tmp;
    QString m_cli;
    QString m_python;
    QString m_script;
    QString m_runsDir;
};

void TestHangVerdict::initTestCase()
{
    m_python = qEnvironmentVariable("RANKDECK_TORCH_PYTHON");
    if (m_python.isEmpty() || !QFileInfo(m_python).isExecutable())
        QSKIP("no torch Python (RANKDECK_TORCH_PYTHON): scripts/bootstrap.sh creates it");
    m_cli = qEnvironmentVariable("RANKDECK_BIN_DIR") + u"/rankdeck-cli"_s;
    QVERIFY(QFileInfo(m_cli).isExecutable());
    m_script =
        qEnvironmentVariable("RANKDECK_SOURCE_DIR") + u"/tests/cli/programs/collectives.py"_s;
    QVERIFY(QFileInfo::exists(m_script));
    QVERIFY(m_tmp.isValid());
    QVERIFY(testing::isolateUserDirectories(m_tmp.path()));
    m_runsDir = m_tmp.filePath(u"XDG_DATA_HOME/rankdeck/runs"_s);
    m_sshWhy = SshFixture::unavailableReason();
    if (m_sshWhy.isEmpty() && !m_ssh.start(2))
        m_sshWhy = u"sshd fixture: "_s + m_ssh.lastError();
    if (m_sshWhy.isEmpty()) {
        Profile p = testing::fixtureProfile(m_ssh, u"sshpair"_s, 2, 1);
        p.connectTimeoutSec = 10;
        p.rendezvousTimeoutSec = 120;
        p.heartbeatTimeoutSec = 60;
        QString error;
        QVERIFY2(ProfileStore().save(p, true, &error), qPrintable(error));
    }
}

void TestHangVerdict::verdicts_data()
{
    QTest::addColumn<QString>("profile"); // "local" or "ssh"
    QTest::addColumn<int>("ranks");
    QTest::addColumn<QStringList>("launch"); // more launch flags
    QTest::addColumn<QString>("mode");       // collectives.py's mode; "worker": the built-in one
    QTest::addColumn<QString>("kind");       // the verdict's kind
    QTest::addColumn<QList<int>>("culprits");
    QTest::addColumn<QStringList>("says"); // in `show`, at the top
    QTest::addColumn<QString>("analyser"); // what torch's fr_trace says (regex); "" none
    QTest::addColumn<bool>("fails");       // a rank fails: the run ends by itself

    const QStringList quickHang{u"--hang-timeout"_s, u"8"_s};
    // A desync must be named before the hang watch (5 minutes here) could say anything.
    const QStringList slowHang{u"--hang-timeout"_s, u"300"_s};
    const QString typeMismatch =
        u"Expected collective type: '(barrier|all_reduce)' does not match found collective type: "
        u"'(barrier|all_reduce)'"_s;

    QTest::newRow("a rank sleeps before all_reduce (4 ranks)")
        << u"local"_s << 4 << quickHang << u"sleep"_s << u"missing_ranks"_s << QList<int>{3}
        << QStringList{u"Rank 3 never entered collective #4 of default_pg"_s, u"collectives.py:"_s}
        << u"missing ranks: \\{3\\}"_s << false;
    QTest::newRow("uneven shards: barrier vs all_reduce (2 ranks)")
        << u"local"_s << 2 << slowHang << u"uneven"_s << u"desync"_s << QList<int>{}
        << QStringList{u"rank 0 entered barrier"_s, u"rank 1 entered all_reduce of 21 float32"_s,
                       u"split evenly"_s}
        << typeMismatch << false;
    QTest::newRow("size mismatch on one of 4 ranks")
        << u"local"_s << 4 << slowHang << u"size"_s << u"desync"_s << QList<int>{2}
        << QStringList{u"rank 2 entered all_reduce of 264 float32"_s,
                       u"Root cause (named by the flight recorder): rank 2"_s}
        << u"Culprit rank 2"_s << true;
    QTest::newRow("a new_group subgroup (3 ranks)")
        << u"local"_s << 3 << slowHang << u"subgroup"_s << u"desync"_s << QList<int>{}
        << QStringList{u"collective #1 of group 1 (ranks 0–1)"_s} << typeMismatch << false;
    QTest::newRow("built-in worker skips a bucket all-reduce (4 ranks)")
        << u"local"_s << 4 << slowHang << u"worker"_s << u"desync"_s << QList<int>{1}
        << QStringList{u"rank 1"_s} << u"Culprit rank 1"_s << false;
    QTest::newRow("a rank holds the GIL (3 ranks)")
        << u"local"_s << 3 << quickHang << u"gil"_s << u"missing_ranks"_s << QList<int>{2}
        << QStringList{u"no answer within 2 s: the program holds the GIL"_s} << QString() << false;
    QTest::newRow("a rank's dump is garbage (3 ranks)")
        << u"local"_s << 3 << quickHang << u"garbage"_s << u"missing_ranks"_s << QList<int>{2}
        << QStringList{u"rank 1 (its dump could not be read: "_s} << QString() << false;
    QTest::newRow("point-to-point: 2 sends, 3 receives (2 ranks)")
        << u"local"_s << 2 << quickHang << u"p2p"_s << u"missing_ranks"_s << QList<int>{0}
        << QStringList{u"Point-to-point, not a collective: rank 1 waits in recv from rank 0 "
                       "(collectives.py:"_s,
                       u"`dist.recv(t, src=0)`); rank 0 is not sending: it is at collectives.py:"_s,
                       u"waits in a send or receive: gloo::transport::tcp::UnboundBuffer::waitRecv"_s}
        << QString() << false;
    QTest::newRow("batch_isend_irecv with a missing peer op (2 ranks)")
        << u"local"_s << 2 << quickHang << u"batch"_s << u"missing_ranks"_s << QList<int>{1}
        << QStringList{u"Point-to-point, not a collective: rank 0 waits in a send's wait()"_s,
                       u"rank 1 is in no send, receive or collective"_s}
        << QString() << false;
    QTest::newRow("flight recorder off: the stacks, and why")
        << u"local"_s << 2 << (quickHang + QStringList{u"--no-flight-recorder"_s}) << u"sleep"_s
        << u"undecided"_s << QList<int>{}
        << QStringList{u"flight recorder off (--no-flight-recorder)"_s,
                       u"Where the ranks wait, by their last stacks:"_s, u"python thread"_s}
        << QString() << false;
    QTest::newRow("uneven shards on 2 sshd nodes")
        << u"ssh"_s << 2 << slowHang << u"uneven"_s << u"desync"_s << QList<int>{}
        << QStringList{u"rank 0 entered barrier"_s} << typeMismatch << false;
}

void TestHangVerdict::verdicts()
{
    QFETCH(QString, profile);
    QFETCH(int, ranks);
    QFETCH(QStringList, launch);
    QFETCH(QString, mode);
    QFETCH(QString, kind);
    QFETCH(QList<int>, culprits);
    QFETCH(QStringList, says);
    QFETCH(QString, analyser);
    QFETCH(bool, fails);
    if (profile == u"ssh"_s && !m_sshWhy.isEmpty())
        QSKIP(qPrintable(m_sshWhy));
    const QString name = profile + u'-' + mode +
                         (launch.contains(u"--no-flight-recorder"_s) ? u"-off"_s : QString());
    QStringList args{u"launch"_s, u"--name"_s, name, u"--no-progress"_s, u"--quiet"_s};
    if (profile == u"local"_s)
        args << u"--profile"_s << u"local"_s << u"--nproc-per-node"_s << QString::number(ranks);
    else
        args << u"--profile"_s << u"sshpair"_s << u"--accept-new-host-keys"_s;
    args << launch;
    if (mode == u"worker"_s)
        args << u"--"_s << u"--task"_s << u"linear"_s << u"--steps"_s << u"8"_s << u"--fault"_s
             << u"skip-allreduce@3"_s << u"--fault-rank"_s << u"1"_s;
    else
        args << u"--exec"_s << u"--"_s << m_python << m_script << mode;
    QProcess launcher;
    launcher.setProcessChannelMode(QProcess::MergedChannels);
    launcher.start(m_cli, args);
    QVERIFY(launcher.waitForStarted());
    QString id;
    // A check that fails leaves no run behind: it is stopped as a user would.
    const auto cleanup = qScopeGuard([&] {
        if (launcher.state() == QProcess::NotRunning)
            return;
        if (!id.isEmpty())
            cli({u"stop"_s, id});
        if (!launcher.waitForFinished(60000))
            launcher.kill();
    });
    auto output = [&] { return QString::fromUtf8(launcher.readAll()).right(6000); };

    QString dir;
    QJsonObject state, fr;
    // When the launcher received the last rank's "parting <rank>" line (rank-<r>.idx: 24-byte
    // records, offset then arrival µs), 0 before every rank printed it: the ranks are then where
    // the case puts them, and only a collection made after that can tell where. Before, an 8 s
    // hang timeout may flag ranks still importing torch on a loaded machine: that collection
    // (no dumps) says nothing, and `stacks` would find no verdict to put on top once they print.
    auto partedUs = [&]() -> qint64 {
        if (mode == u"worker"_s)
            return 1;
        qint64 last = 0;
        for (int r = 0; r < ranks; ++r) {
            QFile log(dir + u"/rank-%1.log"_s.arg(r)), idx(dir + u"/rank-%1.idx"_s.arg(r));
            if (!log.open(QIODevice::ReadOnly) || !idx.open(QIODevice::ReadOnly))
                return 0;
            const QByteArray text = log.readAll(), records = idx.readAll();
            const qsizetype at = text.lastIndexOf(u"parting %1\n"_s.arg(r).toUtf8());
            qint64 arrival = 0;
            for (qsizetype i = 0; at >= 0 && i + 24 <= records.size(); i += 24) {
                qint64 offset = 0;
                memcpy(&offset, records.constData() + i, 8);
                if (offset == at)
                    memcpy(&arrival, records.constData() + i + 8, 8);
            }
            if (arrival == 0)
                return 0;
            last = std::max(last, arrival);
        }
        return last;
    };
    // The verdict, as state.json has it once shown; and whether any rank was flagged hung then.
    auto shown = [&] {
        dir = runDirectory(name);
        const qint64 parted = dir.isEmpty() ? 0 : partedUs();
        if (parted == 0)
            return false;
        state = testing::readJson(dir + u"/state.json"_s);
        fr = state.value(u"flight_recorder"_s).toObject();
        return fr.value(u"verdict_shown"_s).toBool() &&
               fr.value(u"verdict_us"_s).toInteger() > parted &&
               fr.value(u"verdict"_s).toObject().value(u"kind"_s).toString() == kind;
    };
    QVERIFY2(QTest::qWaitFor(shown, 240000),
             qPrintable(QString::fromUtf8(QJsonDocument(fr).toJson()) + output()));
    id = QFileInfo(dir).fileName();
    const QJsonObject verdict = fr.value(u"verdict"_s).toObject();
    QList<int> named;
    for (const QJsonValue &v : verdict.value(u"culprits"_s).toArray())
        named << v.toInt();
    QCOMPARE(named, culprits);
    if (kind == u"desync"_s && !fails) {
        // Faster than the hang timeout: no rank was flagged hung when it was shown.
        for (const QJsonValue &r : state.value(u"ranks"_s).toArray())
            QVERIFY2(!r.toObject().value(u"hung"_s).toBool(), qPrintable(id));
    }
    if (fails) {
        QVERIFY2(testing::ended(launcher, 180000), qPrintable(output()));
        QCOMPARE(launcher.exitCode(), 1);
    } else if (kind != u"desync"_s) {
        // The stacks the hang watch asked for, for the fallback and the lines.
        QVERIFY2(QTest::qWaitFor(
                     [&] {
                         for (int r = 0; r < ranks; ++r)
                             if (!QFileInfo::exists(dir + u"/stacks-rank-%1.txt"_s.arg(r)))
                                 return false;
                         return true;
                     },
                     120000),
                 qPrintable(output()));
    }

    // `show`: why the ranks are stuck comes first.
    Result show;
    QDeadlineTimer lines(60000);
    do {
        show = cli({u"show"_s, id});
        bool all = show.code == 0;
        for (const QString &s : says)
            all = all && show.out.contains(s);
        if (all || lines.hasExpired())
            break;
        QTest::qWait(1000); // the where-lines come with stacks asked for after the verdict
    } while (true);
    QVERIFY2(show.code == 0, qPrintable(show.err));
    QVERIFY2(show.out.startsWith(u"Why the ranks are stuck"_s), qPrintable(show.out.left(2000)));
    for (const QString &s : says)
        QVERIFY2(show.out.contains(s), qPrintable(s + u"\n---\n"_s + show.out.left(4000)));

    // `show --json` carries it.
    const Result json = cli({u"show"_s, id, u"--json"_s});
    QVERIFY2(json.code == 0, qPrintable(json.err));
    const QJsonObject shownJson = QJsonDocument::fromJson(json.out.toUtf8()).object();
    QCOMPARE(shownJson.value(u"collective_verdict"_s).toObject().value(u"kind"_s).toString(), kind);

    // `stacks` while it runs: asks again (stacks and flight recorders), the verdict on top.
    if (!fails) {
        const Result stacks = cli({u"stacks"_s, id, u"--timeout"_s, u"60"_s});
        QVERIFY2(stacks.out.startsWith(u"Why the ranks are stuck"_s),
                 qPrintable(stacks.out.left(3000) + stacks.err));
    }

    // torch's analyser on the dumps RankDeck kept agrees on the missing ranks and the mismatch.
    if (!analyser.isEmpty()) {
        const QString out = m_tmp.filePath(u"fr-"_s + name);
        const Result exported = cli({u"export"_s, id, u"--flight-recorder"_s, out});
        QVERIFY2(exported.code == 0, qPrintable(exported.err));
        QVERIFY2(exported.err.contains(u"torchfrtrace"_s), qPrintable(exported.err));
        // A rank that died gave no dump: export says so, and torch's analyser then needs to be
        // told to go on without it.
        QStringList flags;
        if (exported.err.contains(u"--allow-incomplete-ranks"_s))
            flags << u"--allow-incomplete-ranks"_s;
        QCOMPARE(!flags.isEmpty(), fails);
        int code = -1;
        const QString report = frTrace(out, flags, &code);
        QVERIFY2(code == 0, qPrintable(report.right(4000)));
        QVERIFY2(QRegularExpression(analyser).match(report).hasMatch(),
                 qPrintable(report.right(4000)));
        // Where torch names a culprit, it is one of ours; where the ranks split evenly and we
        // name none on purpose (docs/crash-reports.md), one of the ranks we say are stuck.
        QList<int> stuck;
        for (const QJsonValue &v : verdict.value(u"victims"_s).toArray())
            stuck << v.toInt();
        static const QRegularExpression culprit(u"Culprit rank (\\d+)"_s);
        for (auto it = culprit.globalMatch(report); it.hasNext();) {
            const int rank = it.next().captured(1).toInt();
            QVERIFY2(culprits.isEmpty() ? stuck.contains(rank) : culprits.contains(rank),
                     qPrintable(report.right(4000)));
        }
    }

    if (!fails) {
        const Result stop = cli({u"stop"_s, id});
        QVERIFY2(stop.code == 0, qPrintable(stop.err));
        QVERIFY(testing::ended(launcher, 120000));
    }
    // After the end, the record still says why: the root cause of `runs`, failure.json.
    const Result runs = cli({u"runs"_s});
    QString line;
    for (const QString &l : runs.out.split(u'\n'))
        if (l.startsWith(id))
            line = l;
    const QString rootCause =
        testing::readJson(dir + u"/state.json"_s).value(u"root_cause_summary"_s).toString();
    QVERIFY2(!rootCause.isEmpty(), qPrintable(runs.out));
    QVERIFY2(line.contains(rootCause.left(60)), qPrintable(line + u" / "_s + rootCause));
    if (!culprits.isEmpty())
        QVERIFY2(rootCause.startsWith(u"rank %1 "_s.arg(culprits.first())), qPrintable(rootCause));
    else if (kind == u"desync"_s) // split evenly: the verdict's headline, no rank named
        QVERIFY2(rootCause.startsWith(u"Desync at collective "_s), qPrintable(rootCause));
    else
        QVERIFY2(rootCause.startsWith(u"hung: ranks "_s), qPrintable(rootCause));
    if (fails) {
        const QJsonArray failures =
            testing::readJson(dir + u"/failure.json"_s).value(u"failures"_s).toArray();
        QVERIFY(!failures.isEmpty());
        QCOMPARE(failures.first().toObject().value(u"rank"_s).toInt(), culprits.first());
        QCOMPARE(failures.first().toObject().value(u"kind"_s).toString(), u"collective"_s);
        bool victim = false;
        for (const QJsonValue &f : failures)
            victim = victim || f.toObject().value(u"reason"_s).toString().startsWith(u"a victim"_s);
        QVERIFY2(victim, QJsonDocument(failures).toJson().constData());
    }
    QVERIFY2(QTest::qWaitFor([&] { return testing::processesOfRun(id).isEmpty(); }, 30000),
             qPrintable(testing::processesOfRun(id).join(u", "_s)));
}

QTEST_GUILESS_MAIN(TestHangVerdict)
#include "tst_hangverdict.moc"
