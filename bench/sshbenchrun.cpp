// SPDX-License-Identifier: GPL-3.0-or-later
#include "sshbenchrun.h"

#include "config/trainingconfig.h"
#include "fixtureprofile.h"
#include "run/runcontroller.h"
#include "sshfixture.h"
#include "stream/workerevent.h"
#include "util/median.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QMap>
#include <QTimer>

#include <algorithm>
#include <cstdio>

#include <sys/resource.h>
#include <unistd.h>

namespace rankdeck::bench {

double median(std::vector<double> v)
{
    return rankdeck::median(std::move(v));
}

QString binDir()
{
    const QString fromEnv = qEnvironmentVariable("RANKDECK_BIN_DIR");
    return fromEnv.isEmpty() ? QCoreApplication::applicationDirPath() + QStringLiteral("/../bin")
                             : fromEnv;
}

void progress(const QString &text)
{
    std::fprintf(stderr, "bench_ssh: %s\n", qPrintable(text));
}

Profile fixtureProfile(const SshFixture &ssh, int nodes, int ranksPerNode)
{
    Profile p =
        rankdeck::testing::fixtureProfile(ssh, QStringLiteral("bench-ssh"), nodes, ranksPerNode);
    p.backend = QStringLiteral("gloo");
    p.connectTimeoutSec = 30;
    p.rendezvousTimeoutSec = 120;
    p.heartbeatTimeoutSec = 60;
    p.environment.insert(QStringLiteral("OMP_NUM_THREADS"), QStringLiteral("1"));
    return p;
}

// One run through RunController, to its own end (the ranks finish by themselves), so that the
// next run starts on a quiet machine; the milestone must have been reached on the way.
// stagesOut: every progress stage the transport reported, with its time.
Timing timedRun(const Profile &profile, const QStringList &workerArgs, const QString &workerPath,
                const QString &runsDir, Until until, bool timeline,
                QList<QPair<QString, double>> *stagesOut)
{
    Timing out;
    TrainingConfig config;
    config.name = QStringLiteral("bench-ssh");
    config.workerArguments = workerArgs;
    RunController::Options options;
    options.workerPath = workerPath;
    options.runsDirectory = runsDir;
    options.hangTimeoutSec = 3600;
    RunController run(profile, config, options);

    int world = 0;
    for (const ProfileNode &node : profile.nodes)
        world += node.ranksPerNode;
    std::vector<double> hello(size_t(world), -1), firstStep(size_t(world), -1);
    QElapsedTimer clock;
    QEventLoop loop;
    bool milestone = false, finished = false;
    auto all = [](const std::vector<double> &v) {
        return std::all_of(v.begin(), v.end(), [](double t) { return t >= 0; });
    };
    // node -> "stage@ms" in order, for --timeline
    QMap<int, QStringList> stages;
    if (timeline) {
        QObject::connect(&run, &RunController::nodeProgress, &run,
                         [&](int node, const QString &, const QString &stage, int percent) {
                             if (percent > 0 && percent < 100)
                                 return; // upload percentages: only the stage's start and end
                             stages[node] << QStringLiteral("%1@%2").arg(stage).arg(
                                 clock.nsecsElapsed() / 1000000);
                         });
    }
    if (stagesOut) {
        QObject::connect(&run, &RunController::nodeProgress, &run,
                         [&](int, const QString &, const QString &stage, int) {
                             stagesOut->append({stage, double(clock.nsecsElapsed()) / 1e9});
                         });
    }
    QObject::connect(&run, &RunController::stateChanged, &run, [&](RunState s) {
        if (s != RunState::Preparing && out.prepared < 0)
            out.prepared = double(clock.nsecsElapsed()) / 1e9;
    });
    QObject::connect(&run, &RunController::eventReceived, &run, [&](const WorkerEvent &e) {
        const int r = e.rank();
        if (r < 0 || r >= world)
            return;
        const double t = double(clock.nsecsElapsed()) / 1e9;
        std::vector<double> *slot = e.type() == WorkerEvent::Type::Hello  ? &hello
                                    : e.type() == WorkerEvent::Type::Step ? &firstStep
                                                                          : nullptr;
        if (!slot || (*slot)[size_t(r)] >= 0)
            return;
        (*slot)[size_t(r)] = t;
        if (slot == &hello && all(hello))
            out.allHello = *std::max_element(hello.begin(), hello.end());
        if (slot == &firstStep && all(firstStep))
            out.allFirstStep = *std::max_element(firstStep.begin(), firstStep.end());
        if ((until == Until::AllHello ? out.allHello : out.allFirstStep) >= 0)
            milestone = true;
    });
    QObject::connect(&run, &RunController::finished, &loop, [&] {
        finished = true;
        loop.quit();
    });
    QTimer limit;
    limit.setSingleShot(true);
    QObject::connect(&limit, &QTimer::timeout, &loop, &QEventLoop::quit);

    QString error;
    clock.start();
    if (!run.start(&error)) {
        out.error = error;
        return out;
    }
    limit.start(300'000);
    loop.exec();
    if (!finished) {
        out.error = QStringLiteral("the run did not end within %1 s").arg(limit.interval() / 1000);
        run.kill();
        QEventLoop drain;
        QObject::connect(&run, &RunController::finished, &drain, &QEventLoop::quit);
        QTimer::singleShot(20'000, &drain, &QEventLoop::quit);
        drain.exec();
        return out;
    }
    if (timeline) {
        for (auto it = stages.cbegin(); it != stages.cend(); ++it)
            progress(QStringLiteral("  node %1: %2, hello@%3")
                         .arg(it.key())
                         .arg(it.value().join(QStringLiteral(", ")))
                         .arg(it.key() < world ? qint64(hello[size_t(it.key())] * 1000) : -1));
    }
    if (run.state() != RunState::Finished)
        out.error = QStringLiteral("run ended %1: %2")
                        .arg(runStateName(run.state()), run.rootCauseSummary());
    else if (!milestone)
        out.error = QStringLiteral("the run finished without every rank reaching the milestone");
    return out;
}

// CPU seconds the fixture's servers spent: each listening sshd with the children it reaped
// (connection handlers, sessions, the shells and commands they ran).
double serverCpuSeconds(const SshFixture &ssh)
{
    const double tick = double(::sysconf(_SC_CLK_TCK));
    double total = 0;
    for (int i = 0; i < ssh.nodeCount(); ++i) {
        QFile f(QStringLiteral("/proc/%1/stat").arg(ssh.serverPid(i)));
        if (!f.open(QIODevice::ReadOnly))
            continue;
        const QByteArray stat = f.readAll();
        const QList<QByteArray> fields = stat.mid(stat.lastIndexOf(')') + 2).split(' ');
        // utime, stime, cutime, cstime: fields 14-17 of proc(5), 12-15 after "pid (comm) "
        for (int k = 11; k <= 14; ++k)
            total += fields.value(k).toDouble() / tick;
    }
    return total;
}

double selfCpuSeconds()
{
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Lets the servers reap what the last run left (sessions end after the transport is gone).
void settle(int msec)
{
    QEventLoop loop;
    QTimer::singleShot(msec, &loop, &QEventLoop::quit);
    loop.exec();
}

QString ms(double seconds)
{
    return QString::number(seconds * 1000, 'f', 0) + QStringLiteral(" ms");
}

// Each repetition's ratio, the spread behind the ratio of the medians.
QJsonArray ratiosOf(const std::vector<double> &num, const std::vector<double> &den)
{
    QJsonArray a;
    for (size_t i = 0; i < std::min(num.size(), den.size()); ++i)
        a.append(num[i] / den[i]);
    return a;
}

} // namespace rankdeck::bench
