// SPDX-License-Identifier: GPL-3.0-or-later
//
// bench_ssh: what going through SSH costs, against a reference measured in the same run.
//   launch  time from RunController::start() until every rank has sent its first step event,
//           the real rankdeck-worker (--task linear --steps 5, Gloo), 2 nodes × 2 ranks of the
//           SSH fixture (real sshd on 127.0.0.2/3) ÷ the same 4 ranks on the local profile.
//           The ssh launches are warm (the worker already deployed, as on a user's second
//           launch); the cold first launch, upload included, is reported in the detail only.
//           Local and ssh launches alternate so that drift in the machine's speed hits both.
//   fanout  time from start() until every rank has said hello (connect, node check, deploy,
//           start) for 32 fixture nodes ÷ for 1 node, one rankdeck-loadgen rank per node. The
//           loadgen is deployed (a fresh worker directory each repetition, so every upload is
//           real) rather than the worker: it is small, so the ratio shows how the launcher
//           scales with nodes (sessions, checks, channels), not the loopback's copy speed.
//   latency the fan-out again, every node behind a TcpProxy (tests/common/tcpproxy.h) that
//           delays each byte by 50 ms each way (a 100 ms round trip) or not at all: (32 nodes at
//           100 ms − 32 nodes at 0 ms) ÷ (1 node at 100 ms − 1 node at 0 ms), i.e. the round
//           trips that 32 nodes cost over those that 1 node costs. Near 1 when the latency is
//           paid once for all nodes; 32 if nodes were handled one after another.
//   slurm   (only with --only slurm) time from start() until every rank's first step on the
//           Slurm fixture (2 slurmd, sbatch on this machine), 2 nodes × 2 ranks of the worker, ÷
//           the same launch through SSH; the part pending in Slurm is reported apart.
//   wide    (only with --only wide) the same time for 16 nodes × 32 rankdeck-loadgen ranks over
//           SSH and 2 Slurm nodes × 64, in seconds (issue 31).
// Medians of --reps repetitions; --quick does fewer; --only launch|fanout|latency|slurm|wide runs
// one part;
// --nodes N changes the fan-out width (the key is only written for 32); --timeline prints, per
// run of the fan-out, when each node reached each stage and when its rank said hello (stderr).
// Prints one JSON line:
// {"results": {...}, "detail": "..."}; a part that cannot run leaves its key out and says why.
#include "config/profile.h"
#include "config/trainingconfig.h"
#include "fixtureprofile.h"
#include "run/runcontroller.h"
#include "slurmfixture.h"
#include "sshbenchrun.h"
#include "sshfixture.h"
#include "stream/workerevent.h"
#include "tcpproxy.h"
#include "transport/slurm/slurmsettings.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

using namespace rankdeck;
using namespace rankdeck::bench;

namespace {

// The fixture's nodes as a Slurm cluster: one sbatch job of `nodes` × `tasksPerNode` in the
// fixture's partition, the worker deployed to sharedDir.
Profile slurmProfile(const SshFixture &ssh, const SlurmFixture &slurm, const QString &name,
                     int nodes, int tasksPerNode, const QString &sharedDir)
{
    Profile cluster = fixtureProfile(ssh, nodes, tasksPerNode);
    cluster.name = name;
    cluster.transport = QStringLiteral("slurm");
    SlurmSettings settings;
    settings.partition = slurm.partition();
    settings.nodes = nodes;
    settings.nprocPerNode = tasksPerNode;
    settings.sharedDir = sharedDir;
    settings.applyTo(&cluster);
    return cluster;
}

// ssh_launch_overhead_ratio; false and *detail say why when it cannot be measured.
bool benchLaunch(int reps, const QString &runsDir, double *ratio, QJsonArray *runs, QString *detail)
{
    const QString worker = binDir() + QStringLiteral("/rankdeck-worker");
    if (!QFileInfo(worker).isExecutable()) {
        *detail = QStringLiteral("launch: not measured: %1 is not built").arg(worker);
        return false;
    }
    SshFixture ssh;
    if (!ssh.start(2)) {
        *detail = QStringLiteral("launch: not measured: SSH fixture: %1").arg(ssh.lastError());
        return false;
    }
    if (!ssh.writeKnownHosts(QDir::homePath() + QStringLiteral("/.ssh/known_hosts"))) {
        *detail = QStringLiteral("launch: not measured: cannot write known_hosts");
        return false;
    }
    const QStringList args{QStringLiteral("--task"), QStringLiteral("linear"),
                           QStringLiteral("--steps"), QStringLiteral("5")};
    const Profile remote = fixtureProfile(ssh, 2, 2);
    Profile local = Profile::builtinLocal(4);
    local.backend = remote.backend;
    local.environment = remote.environment;

    // The first launch on fresh nodes uploads the worker: the cold case.
    const Timing cold = timedRun(remote, args, worker, runsDir, Until::AllFirstStep);
    if (!cold.error.isEmpty()) {
        *detail = QStringLiteral("launch: cold ssh run failed: %1").arg(cold.error);
        return false;
    }
    progress(QStringLiteral("launch: cold ssh %1 (nodes ready after %2)")
                 .arg(ms(cold.allFirstStep), ms(cold.prepared)));
    std::vector<double> viaSsh, viaLocal, sshPrepared;
    for (int i = 0; i < reps; ++i) {
        const Timing l = timedRun(local, args, worker, runsDir, Until::AllFirstStep);
        const Timing s = timedRun(remote, args, worker, runsDir, Until::AllFirstStep);
        for (const Timing *t : {&l, &s}) {
            if (!t->error.isEmpty()) {
                *detail =
                    QStringLiteral("launch: %1 run failed: %2")
                        .arg(t == &l ? QStringLiteral("local") : QStringLiteral("ssh"), t->error);
                return false;
            }
        }
        viaLocal.push_back(l.allFirstStep);
        viaSsh.push_back(s.allFirstStep);
        sshPrepared.push_back(s.prepared);
        progress(QStringLiteral("launch %1/%2: local %3, ssh %4")
                     .arg(i + 1)
                     .arg(reps)
                     .arg(ms(l.allFirstStep), ms(s.allFirstStep)));
    }
    const double s = median(viaSsh), l = median(viaLocal);
    *ratio = s / l;
    *runs = ratiosOf(viaSsh, viaLocal);
    *detail =
        QStringLiteral("launch to every rank's first step, 4 ranks of the real worker (linear, "
                       "Gloo): ssh 2×2 warm "
                       "%1 (nodes ready after %2) vs local %3; cold ssh first launch %4 (nodes "
                       "ready after %5, "
                       "worker uploaded); median of %6")
            .arg(ms(s), ms(median(sshPrepared)), ms(l), ms(cold.allFirstStep), ms(cold.prepared))
            .arg(reps);
    return true;
}

// When a stage starting with `prefix` was reported; -1 if never.
double stageTime(const QList<QPair<QString, double>> &stages, const QString &prefix)
{
    for (const auto &[stage, t] : stages)
        if (stage.startsWith(prefix))
            return t;
    return -1;
}

// slurm_launch_overhead_ratio: from the start of the run (the login check, the submit) until
// every rank completed its first step on the fixture's Slurm cluster (2 nodes × 2 ranks, sbatch
// on this machine), over the same 2 × 2 launch through SSH; slurm_pending_ms: the part of it the
// job spent pending in Slurm (from "submitted job" to "running" in the transport's progress).
bool benchSlurm(int reps, const QString &runsDir, const QString &scratch, QJsonObject *results,
                QString *detail)
{
    const QString worker = binDir() + QStringLiteral("/rankdeck-worker");
    if (!QFileInfo(worker).isExecutable()) {
        *detail = QStringLiteral("slurm: not measured: %1 is not built").arg(worker);
        return false;
    }
    if (const QString why = SlurmFixture::unavailableReason(); !why.isEmpty()) {
        *detail = QStringLiteral("slurm: not measured: %1").arg(why);
        return false;
    }
    SlurmFixture slurm;
    SshFixture ssh;
    if (!slurm.start(2) || !ssh.start(2) ||
        !ssh.writeKnownHosts(QDir::homePath() + QStringLiteral("/.ssh/known_hosts"))) {
        *detail = QStringLiteral("slurm: not measured: fixtures: %1 %2")
                      .arg(slurm.lastError(), ssh.lastError());
        return false;
    }
    const QStringList args{QStringLiteral("--task"), QStringLiteral("linear"),
                           QStringLiteral("--steps"), QStringLiteral("5")};
    const Profile remote = fixtureProfile(ssh, 2, 2);
    const Profile cluster = slurmProfile(ssh, slurm, QStringLiteral("bench-slurm"), 2, 2,
                                         scratch + QStringLiteral("/slurm-shared"));
    // Cold runs first: both upload the worker once.
    for (const Profile *p : {&remote, static_cast<const Profile *>(&cluster)}) {
        const Timing cold = timedRun(*p, args, worker, runsDir, Until::AllFirstStep);
        if (!cold.error.isEmpty()) {
            *detail = QStringLiteral("slurm: cold %1 run failed: %2").arg(p->transport, cold.error);
            return false;
        }
    }
    std::vector<double> viaSsh, viaSlurm, pending;
    for (int i = 0; i < reps; ++i) {
        QList<QPair<QString, double>> stages;
        const Timing s = timedRun(remote, args, worker, runsDir, Until::AllFirstStep);
        const Timing q =
            timedRun(cluster, args, worker, runsDir, Until::AllFirstStep, false, &stages);
        if (!s.error.isEmpty() || !q.error.isEmpty()) {
            *detail = QStringLiteral("slurm: run failed: %1").arg(s.error + q.error);
            return false;
        }
        const double submitted = stageTime(stages, QStringLiteral("submitted job"));
        const double running = stageTime(stages, QStringLiteral("job "));
        viaSsh.push_back(s.allFirstStep);
        viaSlurm.push_back(q.allFirstStep);
        pending.push_back(submitted >= 0 && running >= submitted ? running - submitted : 0);
        progress(QStringLiteral("slurm %1/%2: ssh %3, slurm %4 (pending %5)")
                     .arg(i + 1)
                     .arg(reps)
                     .arg(ms(s.allFirstStep), ms(q.allFirstStep), ms(pending.back())));
    }
    const double s = median(viaSsh), q = median(viaSlurm), p = median(pending);
    results->insert(QStringLiteral("slurm_launch_overhead_ratio"), q / s);
    results->insert(QStringLiteral("slurm_pending_ms"), p * 1000);
    QJsonArray ratios, pendingMs;
    for (size_t i = 0; i < viaSsh.size(); ++i) {
        ratios.append(viaSlurm[i] / viaSsh[i]);
        pendingMs.append(pending[i] * 1000);
    }
    results->insert(QStringLiteral("slurm_launch_overhead_ratio_runs"), ratios);
    results->insert(QStringLiteral("slurm_pending_ms_runs"), pendingMs);
    *detail = QStringLiteral("slurm: launch to every rank's first step, 2×2 real worker (linear, "
                             "Gloo), warm: slurm %1 (of which pending in Slurm %2, the rest: "
                             "check, sbatch, srun, polling at 300 ms) vs ssh %3; median of %4")
                  .arg(ms(q), ms(p), ms(s))
                  .arg(reps);
    return true;
}

// Issue 31's launch at size through the remote transports: 16 fixture nodes × 32 ranks over SSH
// and 2 Slurm nodes × 64 tasks, of rankdeck-loadgen (512 and 128 libtorch processes do not fit
// these 2 cores). One warm run each after a cold one (the deploy); start() → every rank's first
// step. Reported only: the local 512-rank launch has the goal (bench_scale).
bool benchWide(const QString &runsDir, const QString &scratch, QJsonObject *results,
               QString *detail)
{
    const QString loadgen = binDir() + QStringLiteral("/rankdeck-loadgen");
    if (!QFileInfo(loadgen).isExecutable()) {
        *detail = QStringLiteral("wide: not measured: %1 is not built").arg(loadgen);
        return false;
    }
    const QStringList args{QStringLiteral("--lines-per-sec"), QStringLiteral("20"),
                           QStringLiteral("--steps-per-sec"), QStringLiteral("5"),
                           QStringLiteral("--duration"),      QStringLiteral("8")};
    QStringList said;
    const auto measure = [&](const Profile &profile, const QString &key) {
        const Timing cold = timedRun(profile, args, loadgen, runsDir, Until::AllFirstStep);
        const Timing warm = cold.error.isEmpty()
                                ? timedRun(profile, args, loadgen, runsDir, Until::AllFirstStep)
                                : cold;
        if (!warm.error.isEmpty()) {
            said << QStringLiteral("%1: not measured: %2").arg(key, warm.error);
            return;
        }
        results->insert(key, warm.allFirstStep);
        said << QStringLiteral("%1 %2 (cold, deploy included: %3; every node ready %4, every "
                               "hello %5)")
                    .arg(key, ms(warm.allFirstStep), ms(cold.allFirstStep), ms(warm.prepared),
                         ms(warm.allHello));
        progress(said.last());
        settle(2000);
    };
    {
        SshFixture ssh;
        if (ssh.start(16) &&
            ssh.writeKnownHosts(QDir::homePath() + QStringLiteral("/.ssh/known_hosts")))
            measure(fixtureProfile(ssh, 16, 32), QStringLiteral("scale_ssh_16x32_launch_s"));
        else
            said << QStringLiteral("ssh 16×32: not measured: fixture: %1").arg(ssh.lastError());
    }
    if (const QString why = SlurmFixture::unavailableReason(); !why.isEmpty()) {
        said << QStringLiteral("slurm 2×64: not measured: %1").arg(why);
    } else {
        SlurmFixture slurm;
        SshFixture ssh;
        // 64 CPUs claimed per node, so that 64 tasks fit (the fixture's default, 4, pends).
        if (slurm.start(2, 64) && ssh.start(2) &&
            ssh.writeKnownHosts(QDir::homePath() + QStringLiteral("/.ssh/known_hosts"))) {
            measure(slurmProfile(ssh, slurm, QStringLiteral("bench-slurm-wide"), 2, 64,
                                 scratch + QStringLiteral("/slurm-wide-shared")),
                    QStringLiteral("scale_slurm_2x64_launch_s"));
        } else {
            said << QStringLiteral("slurm 2×64: not measured: fixtures: %1 %2")
                        .arg(slurm.lastError(), ssh.lastError());
        }
    }
    *detail = QStringLiteral("wide (loadgen, 20 lines/s and 5 steps/s a rank): ") +
              said.join(QStringLiteral("; "));
    return true;
}

// ssh_fanout_ratio_32_vs_1
bool benchFanout(int reps, int nodes, const QString &runsDir, bool timeline, double *ratio,
                 QJsonArray *runs, QString *detail)
{
    const QString loadgen = binDir() + QStringLiteral("/rankdeck-loadgen");
    if (!QFileInfo(loadgen).isExecutable()) {
        *detail = QStringLiteral("fanout: not measured: %1 is not built").arg(loadgen);
        return false;
    }
    SshFixture ssh;
    QElapsedTimer fixtureClock;
    fixtureClock.start();
    if (!ssh.start(nodes)) {
        *detail = QStringLiteral("fanout: not measured: SSH fixture with %1 nodes: %2")
                      .arg(nodes)
                      .arg(ssh.lastError());
        return false;
    }
    progress(QStringLiteral("fanout: %1 sshd started in %2")
                 .arg(nodes)
                 .arg(ms(double(fixtureClock.elapsed()) / 1000)));
    if (!ssh.writeKnownHosts(QDir::homePath() + QStringLiteral("/.ssh/known_hosts"))) {
        *detail = QStringLiteral("fanout: not measured: cannot write known_hosts");
        return false;
    }
    // Ranks end on their own a moment after their hello; nothing listens on the "store" port.
    const QStringList args{QStringLiteral("--duration"),      QStringLiteral("0.5"),
                           QStringLiteral("--lines-per-sec"), QStringLiteral("10"),
                           QStringLiteral("--steps-per-sec"), QStringLiteral("5")};
    std::vector<double> one, many, onePrepared, manyPrepared, serverCpu, clientCpu;
    for (int i = 0; i < reps; ++i) {
        for (int count : {1, nodes}) {
            Profile p = fixtureProfile(ssh, count, 1);
            p.workerDirectory =
                QStringLiteral("~/.cache/rankdeck/bench-fanout-%1")
                    .arg(QRandomGenerator::global()->generate(), 8, 16, QLatin1Char('0'));
            settle(300);
            const double server0 = serverCpuSeconds(ssh), client0 = selfCpuSeconds();
            const Timing t = timedRun(p, args, loadgen, runsDir, Until::AllHello, timeline);
            if (!t.error.isEmpty()) {
                *detail = QStringLiteral("fanout: %1-node run failed: %2").arg(count).arg(t.error);
                return false;
            }
            const double client = selfCpuSeconds() - client0;
            settle(300);
            // Per node, for the whole run (the rank's 0.5 s of loadgen included on the server).
            const double server = serverCpuSeconds(ssh) - server0;
            (count == 1 ? one : many).push_back(t.allHello);
            (count == 1 ? onePrepared : manyPrepared).push_back(t.prepared);
            if (count != 1) {
                serverCpu.push_back(server / count);
                clientCpu.push_back(client / count);
            }
            progress(
                QStringLiteral(
                    "fanout %1/%2: %3 node(s): every rank started after %4 (nodes ready after %5); "
                    "CPU per node: servers %6, launcher %7")
                    .arg(i + 1)
                    .arg(reps)
                    .arg(count)
                    .arg(ms(t.allHello), ms(t.prepared), ms(server / count), ms(client / count)));
        }
    }
    const double a = median(one), b = median(many);
    *ratio = b / a;
    *runs = ratiosOf(many, one);
    const auto list = [](const std::vector<double> &v) {
        QStringList l;
        for (double x : v)
            l << QString::number(x * 1000, 'f', 0);
        return l.join(QLatin1Char('/'));
    };
    *detail = QStringLiteral(
                  "fanout: connect + deploy rankdeck-loadgen (%1 KiB, fresh worker directory each "
                  "time) + "
                  "start, one rank per node: %2 nodes %3 (nodes ready after %4) vs 1 node %5 "
                  "(ready after "
                  "%6); median of %7 (runs, ms: %2 nodes %8, 1 node %9); CPU per node at %2 nodes: "
                  "servers %10, launcher %11")
                  .arg(QFileInfo(loadgen).size() / 1024)
                  .arg(nodes)
                  .arg(ms(b), ms(median(manyPrepared)), ms(a), ms(median(onePrepared)))
                  .arg(reps)
                  .arg(list(many), list(one), ms(median(serverCpu)), ms(median(clientCpu)));
    return true;
}

// ssh_fanout_latency_ratio
bool benchFanoutLatency(int reps, int nodes, const QString &runsDir, bool timeline, double *ratio,
                        QJsonArray *runs, QString *detail)
{
    const QString loadgen = binDir() + QStringLiteral("/rankdeck-loadgen");
    if (!QFileInfo(loadgen).isExecutable()) {
        *detail = QStringLiteral("latency: not measured: %1 is not built").arg(loadgen);
        return false;
    }
    SshFixture ssh;
    if (!ssh.start(nodes)) {
        *detail = QStringLiteral("latency: not measured: SSH fixture: %1").arg(ssh.lastError());
        return false;
    }
    std::vector<std::unique_ptr<TcpProxy>> proxies;
    QFile knownHosts(QDir::homePath() + QStringLiteral("/.ssh/known_hosts"));
    QDir().mkpath(QFileInfo(knownHosts).path());
    if (!knownHosts.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        *detail = QStringLiteral("latency: not measured: cannot write known_hosts");
        return false;
    }
    for (int i = 0; i < nodes; ++i) {
        proxies.push_back(std::make_unique<TcpProxy>(ssh.address(i), ssh.port(i)));
        QString error;
        if (!proxies.back()->start(&error)) {
            *detail = QStringLiteral("latency: not measured: proxy: %1").arg(error);
            return false;
        }
        // The node's key under the address the launcher reaches it by.
        knownHosts.write(QStringLiteral("[127.0.0.1]:%1 %2\n")
                             .arg(proxies.back()->port())
                             .arg(ssh.knownHostsLine(i).section(QLatin1Char(' '), 1))
                             .toUtf8());
    }
    knownHosts.close();
    const QStringList args{QStringLiteral("--duration"),      QStringLiteral("0.5"),
                           QStringLiteral("--lines-per-sec"), QStringLiteral("10"),
                           QStringLiteral("--steps-per-sec"), QStringLiteral("5")};
    // [count == 1 ? 0 : 1][delayed]: every repetition's time to every rank's hello.
    std::vector<double> t[2][2];
    for (int i = 0; i < reps; ++i) {
        for (int count : {1, nodes}) {
            for (const int delayMs : {0, 50}) {
                for (auto &proxy : proxies)
                    proxy->setDelayMs(delayMs);
                Profile p = fixtureProfile(ssh, count, 1);
                for (int n = 0; n < count; ++n) {
                    p.nodes[n].host = QStringLiteral("127.0.0.1");
                    p.nodes[n].port = proxies[size_t(n)]->port();
                }
                p.workerDirectory =
                    QStringLiteral("~/.cache/rankdeck/bench-latency-%1")
                        .arg(QRandomGenerator::global()->generate(), 8, 16, QLatin1Char('0'));
                settle(300);
                const Timing run = timedRun(p, args, loadgen, runsDir, Until::AllHello, timeline);
                if (!run.error.isEmpty()) {
                    *detail = QStringLiteral("latency: %1-node run at %2 ms failed: %3")
                                  .arg(count)
                                  .arg(2 * delayMs)
                                  .arg(run.error);
                    return false;
                }
                t[count == 1 ? 0 : 1][delayMs > 0].push_back(run.allHello);
                progress(QStringLiteral("latency %1/%2: %3 node(s), %4 ms round trip: every rank "
                                        "started after %5 (nodes ready after %6)")
                             .arg(i + 1)
                             .arg(reps)
                             .arg(count)
                             .arg(2 * delayMs)
                             .arg(ms(run.allHello), ms(run.prepared)));
            }
        }
    }
    *runs = QJsonArray(); // the caller's array may hold another part's runs
    const double oneCost = median(t[0][1]) - median(t[0][0]);
    const double manyCost = median(t[1][1]) - median(t[1][0]);
    *ratio = manyCost / oneCost;
    for (size_t i = 0; i < t[0][0].size(); ++i)
        runs->append((t[1][1][i] - t[1][0][i]) / (t[0][1][i] - t[0][0][i]));
    *detail =
        QStringLiteral("latency: connect + deploy rankdeck-loadgen + start, one rank per node, "
                       "every node behind a TcpProxy: %1 nodes %2 at a 100 ms round trip vs "
                       "%3 at 0 ms (+%4); 1 node %5 vs %6 (+%7); median of %8")
            .arg(nodes)
            .arg(ms(median(t[1][1])), ms(median(t[1][0])), ms(manyCost), ms(median(t[0][1])),
                 ms(median(t[0][0])), ms(oneCost))
            .arg(reps);
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    // Everything the ssh client reads or writes (known_hosts, ~/.ssh/config) and every run
    // record goes into a throw-away tree, never the user's own.
    QTemporaryDir scratch;
    if (!scratch.isValid()) {
        std::fprintf(stderr, "bench_ssh: cannot create a temporary directory\n");
        return 1;
    }
    rankdeck::testing::isolateUserDirectories(scratch.path());
    qputenv("OMP_NUM_THREADS", "1");

    QCoreApplication app(argc, argv);
    const QStringList args = QCoreApplication::arguments();
    const bool quick = args.contains(QStringLiteral("--quick"));
    const int repsAt = int(args.indexOf(QStringLiteral("--reps")));
    const int reps = repsAt > 0 ? std::max(1, args.value(repsAt + 1).toInt()) : 5;
    // --quick must stay within a few minutes on a 2-core machine.
    const int effectiveReps = quick ? std::min(reps, 3) : reps;
    const QString runsDir = scratch.filePath(QStringLiteral("runs"));
    const int onlyAt = int(args.indexOf(QStringLiteral("--only")));
    const QString only = onlyAt > 0 ? args.value(onlyAt + 1) : QString();
    const int nodesAt = int(args.indexOf(QStringLiteral("--nodes")));
    const int fanoutNodes = nodesAt > 0 ? std::max(2, args.value(nodesAt + 1).toInt()) : 32;
    const bool timeline = args.contains(QStringLiteral("--timeline"));

    QJsonObject results;
    QStringList detail;
    if (const QString why = SshFixture::unavailableReason(); !why.isEmpty()) {
        detail << QStringLiteral("not measured: %1").arg(why);
    } else {
        double ratio = 0;
        QJsonArray runs;
        QString text;
        if (only.isEmpty() || only == QLatin1String("launch")) {
            if (benchLaunch(effectiveReps, runsDir, &ratio, &runs, &text)) {
                results[QStringLiteral("ssh_launch_overhead_ratio")] = ratio;
                results[QStringLiteral("ssh_launch_overhead_ratio_runs")] = runs;
            }
            detail << text;
        }
        // Not part of the default set: bench/run's "slurm" group asks for it.
        if (only == QLatin1String("slurm")) {
            benchSlurm(effectiveReps, runsDir, scratch.path(), &results, &text);
            detail << text;
        }
        // Not part of the default set either: bench/run's "scalewide" group asks for it.
        if (only == QLatin1String("wide")) {
            benchWide(runsDir, scratch.path(), &results, &text);
            detail << text;
        }
        if (only.isEmpty() || only == QLatin1String("fanout")) {
            if (benchFanout(effectiveReps, fanoutNodes, runsDir, timeline, &ratio, &runs, &text)) {
                const QString key =
                    fanoutNodes == 32 ? QStringLiteral("ssh_fanout_ratio_32_vs_1")
                                      : QStringLiteral("ssh_fanout_ratio_%1_vs_1").arg(fanoutNodes);
                results[key] = ratio;
                results[key + QStringLiteral("_runs")] = runs;
            }
            detail << text;
        }
        if (only.isEmpty() || only == QLatin1String("latency")) {
            if (benchFanoutLatency(effectiveReps, fanoutNodes, runsDir, timeline, &ratio, &runs,
                                   &text)) {
                const QString key =
                    fanoutNodes == 32
                        ? QStringLiteral("ssh_fanout_latency_ratio")
                        : QStringLiteral("ssh_fanout_latency_ratio_%1_vs_1").arg(fanoutNodes);
                results[key] = ratio;
                results[key + QStringLiteral("_runs")] = runs;
            }
            detail << text;
        }
    }
    QJsonObject out;
    out[QStringLiteral("results")] = results;
    out[QStringLiteral("detail")] = detail.join(QStringLiteral("; "));
    std::printf("%s\n", QJsonDocument(out).toJson(QJsonDocument::Compact).constData());
    return 0;
}
