// SPDX-License-Identifier: GPL-3.0-or-later
//
// What a user's program sees under `rankdeck-cli launch --exec` against what it sees under the
// installed torchrun, same program (tests/cli/programs/dump_environment.py), same environment,
// same ranks per node (issue #27, defect 6): every variable torchrun adds or changes is there
// with torchrun's value, but for the ones the README names as different (MASTER_PORT, …) and
// says why. OMP_NUM_THREADS=1 comes exactly when torchrun sets it (several ranks on the node,
// the variable not set at all, not even empty), and the launcher then says so once, as
// torchrun warns.
#include "testprocesses.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;

namespace {

QVariantMap readEnvironment(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object().toVariantMap();
}

// torchrun's values RankDeck does not copy, and what it gives instead (README, "What your
// program sees"): a check per variable.
bool differsOnPurpose(const QString &name, const QString &ours, QString *why)
{
    if (name == u"MASTER_PORT"_s) {
        *why = u"a port"_s;
        return ours.toInt() > 0;
    }
    if (name == u"MASTER_ADDR"_s) {
        *why = u"127.0.0.1 for torchrun's localhost"_s;
        return ours == u"127.0.0.1"_s;
    }
    if (name == u"TORCHELASTIC_RUN_ID"_s || name == u"TORCHELASTIC_ERROR_FILE"_s) {
        *why = u"the run's own"_s;
        return !ours.isEmpty();
    }
    if (name == u"TORCHELASTIC_USE_AGENT_STORE"_s) {
        *why = u"False: no agent serves the store, rank 0 does"_s;
        return ours == u"False"_s;
    }
    return false;
}

} // namespace

class TestTorchrunEnv : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void sameAsTorchrun_data();
    void sameAsTorchrun();

private:
    QTemporaryDir m_home;
    QString m_cli;
    QString m_python;
    QString m_torchrun;
    QString m_program;
};

void TestTorchrunEnv::initTestCase()
{
    QVERIFY(m_home.isValid());
    m_cli = qEnvironmentVariable("RANKDECK_BIN_DIR") + u"/rankdeck-cli"_s;
    QVERIFY2(QFileInfo(m_cli).isExecutable(), qPrintable(m_cli));
    m_program =
        qEnvironmentVariable("RANKDECK_SOURCE_DIR") + u"/tests/cli/programs/dump_environment.py"_s;
    QVERIFY(QFileInfo::exists(m_program));
    m_python = qEnvironmentVariable("RANKDECK_TORCH_PYTHON");
    if (m_python.isEmpty() || !QFileInfo(m_python).isExecutable())
        QSKIP("no torch Python (RANKDECK_TORCH_PYTHON): scripts/bootstrap.sh creates it");
    m_torchrun = QFileInfo(m_python).absolutePath() + u"/torchrun"_s;
    if (!QFileInfo(m_torchrun).isExecutable())
        QSKIP(qPrintable(u"no torchrun beside the torch Python (%1)"_s.arg(m_torchrun)));
}

void TestTorchrunEnv::sameAsTorchrun_data()
{
    QTest::addColumn<int>("ranks");
    // NAME=VALUE in both launchers' own environment, as a user's shell would have them.
    QTest::addColumn<QStringList>("environment");
    QTest::addColumn<bool>("ompDefault"); // torchrun sets OMP_NUM_THREADS=1 and warns
    QTest::newRow("2 ranks") << 2 << QStringList{} << true;
    QTest::newRow("2 ranks, OMP_NUM_THREADS=3")
        << 2 << QStringList{u"OMP_NUM_THREADS=3"_s} << false;
    QTest::newRow("2 ranks, OMP_NUM_THREADS empty")
        << 2 << QStringList{u"OMP_NUM_THREADS="_s} << false;
    QTest::newRow("2 ranks, the user's TORCH_NCCL_ASYNC_ERROR_HANDLING=3")
        << 2 << QStringList{u"TORCH_NCCL_ASYNC_ERROR_HANDLING=3"_s} << true;
    QTest::newRow("1 rank") << 1 << QStringList{} << false;
}

void TestTorchrunEnv::sameAsTorchrun()
{
    QFETCH(int, ranks);
    QFETCH(QStringList, environment);
    QFETCH(bool, ompDefault);
    const QString row = QString::fromUtf8(QTest::currentDataTag());
    QProcessEnvironment env = rankdeck::testing::cliEnvironment(m_home.path());
    // The machine's or CI's own values must not decide the rows.
    for (const QString &name : env.keys()) {
        if (name == u"OMP_NUM_THREADS"_s || name.startsWith(u"TORCHELASTIC_"_s) ||
            name.startsWith(u"TORCH_NCCL_"_s) || name.startsWith(u"RANKDECK_"_s))
            env.remove(name);
    }
    for (const QString &kv : environment)
        env.insert(kv.section(u'=', 0, 0), kv.section(u'=', 1));
    const QString tag = QString::number(qHash(row), 16);
    const QString theirs = m_home.filePath(u"torchrun-"_s + tag);
    const QString ours = m_home.filePath(u"rankdeck-"_s + tag);
    QVERIFY(QDir().mkpath(theirs) && QDir().mkpath(ours));

    const rankdeck::testing::CommandResult t = rankdeck::testing::runCommand(
        m_torchrun, {u"--nproc-per-node"_s, QString::number(ranks), m_program, theirs}, env,
        240000);
    QVERIFY2(t.code == 0, qPrintable(t.out + t.err));
    const rankdeck::testing::CommandResult r = rankdeck::testing::runCommand(
        m_cli,
        {u"launch"_s, u"--profile"_s, u"local"_s, u"--nproc-per-node"_s, QString::number(ranks),
         u"--name"_s, u"env"_s + tag, u"--no-progress"_s, u"--exec"_s, u"--"_s, m_python, m_program,
         ours},
        env, 240000);
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));

    // What both were given (torchrun's own process sees no other); the programs see more.
    QVariantMap base;
    for (const QString &name : env.keys())
        base.insert(name, env.value(name));
    for (int rank = 0; rank < ranks; ++rank) {
        const QVariantMap tr = readEnvironment(theirs + u"/env-rank%1.json"_s.arg(rank));
        const QVariantMap rd = readEnvironment(ours + u"/env-rank%1.json"_s.arg(rank));
        QVERIFY2(!tr.isEmpty() && !rd.isEmpty(), qPrintable(u"rank %1"_s.arg(rank)));
        int compared = 0;
        for (auto it = tr.cbegin(); it != tr.cend(); ++it) {
            const QString name = it.key();
            const QString value = it.value().toString();
            if (base.contains(name) && base.value(name).toString() == value)
                continue; // torchrun passed it on unchanged; so does RankDeck (below)
            ++compared;
            QVERIFY2(rd.contains(name),
                     qPrintable(u"rank %1: torchrun sets %2=%3, RankDeck does not"_s.arg(rank).arg(
                         name, value)));
            const QString mine = rd.value(name).toString();
            QString why;
            if (differsOnPurpose(name, mine, &why))
                continue;
            QVERIFY2(
                mine == value,
                qPrintable(u"rank %1: %2 is %3 under torchrun, %4 under RankDeck%5"_s.arg(rank).arg(
                    name, value, mine, why.isEmpty() ? QString() : u" (expected "_s + why + u')')));
        }
        // RANK, LOCAL_RANK, WORLD_SIZE, …: a row where torchrun changed nothing proves nothing.
        QVERIFY2(compared >= 15, qPrintable(u"only %1 variables from torchrun"_s.arg(compared)));
        for (const QString &kv : environment) {
            const QString name = kv.section(u'=', 0, 0);
            QCOMPARE(rd.value(name).toString(), kv.section(u'=', 1));
        }
    }
    // torchrun's warning and the launcher's note, in the same cases.
    QCOMPARE((t.out + t.err).contains(u"Setting OMP_NUM_THREADS environment variable"_s),
             ompDefault);
    QCOMPARE((r.out + r.err).count(u"OMP_NUM_THREADS=1 on each rank"_s), ompDefault ? 1 : 0);
}

QTEST_GUILESS_MAIN(TestTorchrunEnv)
#include "tst_torchrunenv.moc"
