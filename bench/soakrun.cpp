// SPDX-License-Identifier: GPL-3.0-or-later
#include "soakrun.h"

#include "benchmeasure.h"
#include "loadgenlog.h"
#include "mainwindow.h"
#include "models/runlistmodel.h"
#include "run/runcontroller.h"
#include "run/runmanager.h"
#include "runview.h"
#include "sidepanel.h"
#include "store/compactedfile.h"
#include "store/logstore.h"
#include "store/metricsstore.h"

#include <QDirIterator>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QTimer>
#include <QTreeView>

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <functional>

namespace rankdeck::bench {

namespace {

QString runningRunId(RunManager *runs, const QString &name)
{
    for (const RunInfo &info : runs->history()) {
        if (info.name == name && info.state == RunState::Running)
            return info.id;
    }
    return {};
}

// Milliseconds from starting `cli args` to its first line on stdout (firstLine) or to its exit.
double timeCli(const QString &cli, const QStringList &args, bool firstLine)
{
    QProcess p;
    p.setProcessChannelMode(QProcess::SeparateChannels);
    p.setStandardErrorFile(QProcess::nullDevice());
    QElapsedTimer clock;
    clock.start();
    p.start(cli, args);
    if (!p.waitForStarted(30000))
        return -1;
    double ms = -1;
    if (firstLine) {
        while (p.waitForReadyRead(60000)) {
            if (p.canReadLine()) {
                ms = double(clock.nsecsElapsed()) / 1e6;
                break;
            }
        }
        p.kill();
        p.waitForFinished(10000);
        return ms;
    }
    if (p.waitForFinished(120000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0)
        ms = double(clock.nsecsElapsed()) / 1e6;
    p.readAllStandardOutput();
    return ms;
}

// Its compressed segments included.
qint64 newlines(const QString &path)
{
    CompactedFile f(path);
    if (!f.open())
        return 0;
    qint64 n = 0;
    for (qint64 at = 0, size = f.size(); at < size;) {
        const QByteArray chunk = f.read(at, 1 << 20);
        if (chunk.isEmpty())
            break;
        at += chunk.size();
        n += chunk.count('\n');
    }
    return n;
}

double medianOf(std::vector<double> v)
{
    return percentile(std::move(v), 50);
}

} // namespace

qint64 processRssKb(qint64 pid)
{
    QFile f(QStringLiteral("/proc/%1/status").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : f.readAll().split('\n')) {
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').value(0).toLongLong();
    }
    return -1;
}

double rssGrowthPct(const std::vector<SoakSample> &samples, double from, bool launcher)
{
    if (samples.size() < 2)
        return 0;
    const double end = samples.back().seconds;
    const double half = 0.03 * end;
    std::vector<double> atFrom, atEnd;
    for (const SoakSample &s : samples) {
        const double kb = double(launcher ? s.launcherRssKb : s.guiRssKb);
        if (kb <= 0)
            continue;
        if (std::abs(s.seconds - from * end) <= half)
            atFrom.push_back(kb);
        if (s.seconds >= end - 2 * half)
            atEnd.push_back(kb);
    }
    if (atFrom.empty() || atEnd.empty())
        return 0;
    const double base = medianOf(atFrom);
    return base > 0 ? (medianOf(atEnd) - base) / base * 100.0 : 0;
}

double stallPercentile(const std::vector<SoakTick> &ticks, double fromS, double toS, double p)
{
    std::vector<double> within;
    for (const SoakTick &t : ticks) {
        if (t.seconds >= fromS && t.seconds < toS)
            within.push_back(t.latenessMs);
    }
    return percentile(std::move(within), p);
}

SoakResult runSoak(MainWindow &window, const QString &binDir, const SoakOptions &options)
{
    SoakResult out;
    const QString cli = binDir + QStringLiteral("/rankdeck-cli");
    const QString name = QStringLiteral("soak");
    // The ranks run longer than the soak: the run ends by `rankdeck-cli stop`, after the CLI's
    // latencies were measured on a run still printing.
    const int rankSeconds = options.seconds + 600;
    QProcess launcher;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("RANKDECK_WORKER"), binDir + QStringLiteral("/rankdeck-loadgen"));
    launcher.setProcessEnvironment(env);
    launcher.setStandardOutputFile(QProcess::nullDevice());
    launcher.setStandardErrorFile(QProcess::nullDevice());
    launcher.start(cli,
                   {QStringLiteral("launch"), QStringLiteral("--profile"), QStringLiteral("local"),
                    QStringLiteral("--nproc-per-node"), QString::number(options.ranks),
                    QStringLiteral("--name"), name, QStringLiteral("--quiet"),
                    QStringLiteral("--no-progress"), QStringLiteral("--"),
                    QStringLiteral("--lines-per-sec"), QString::number(options.linesPerSecPerRank),
                    QStringLiteral("--steps-per-sec"), QString::number(options.stepsPerSec),
                    QStringLiteral("--scalars"), QString::number(options.scalars),
                    QStringLiteral("--duration"), QString::number(rankSeconds)});
    if (!launcher.waitForStarted(30000)) {
        out.error =
            QStringLiteral("rankdeck-cli launch did not start: %1").arg(launcher.errorString());
        return out;
    }
    const qint64 launcherPid = launcher.processId();
    const auto stopLauncher = [&] {
        if (launcher.state() == QProcess::NotRunning)
            return;
        launcher.terminate();
        if (!launcher.waitForFinished(60000))
            launcher.kill();
        launcher.waitForFinished(10000);
    };

    // Picked in the run list as a user does; the window then follows the run's record.
    RunManager *runs = window.runManager();
    if (!waitFor([&] { return !runningRunId(runs, name).isEmpty(); }, 60000, 100)) {
        stopLauncher();
        out.error = QStringLiteral("the run did not show as running in the window within 60 s");
        return out;
    }
    out.runId = runningRunId(runs, name);
    SidePanel *side = window.sidePanel();
    waitFor([&] { return side->indexOfRun(out.runId).isValid(); }, 30000, 50);
    side->selectRun(out.runId);
    RunView *view = window.runView();
    if (!waitFor([&] { return view->run() && view->run()->runId() == out.runId; }, 30000)) {
        stopLauncher();
        out.error = QStringLiteral("the window did not follow run %1").arg(out.runId);
        return out;
    }
    RunController *run = view->run();
    view->setCurrentIndex(options.page >= 0 ? options.page : int(RunView::Logs));

    QElapsedTimer clock;
    clock.start();
    constexpr int tickMs = 10;
    qint64 lastTick = -1;
    QTimer tick;
    tick.setTimerType(Qt::PreciseTimer);
    QObject::connect(&tick, &QTimer::timeout, [&] {
        const qint64 now = clock.nsecsElapsed();
        if (lastTick >= 0)
            out.ticks.push_back(
                {double(now) / 1e9, std::max(0.0, double(now - lastTick) / 1e6 - tickMs)});
        lastTick = now;
    });
    const RunView::Page pages[] = {RunView::Overview, RunView::Logs, RunView::Loss};
    int pageTurn = 0;
    QTimer turn;
    QObject::connect(&turn, &QTimer::timeout, view,
                     [&] { view->setCurrentIndex(pages[++pageTurn % 3]); });
    QTimer sample;
    bool inLastMinute = false;
    QObject::connect(&sample, &QTimer::timeout, [&] {
        if (!inLastMinute && clock.elapsed() >= (qint64(options.seconds) - 60) * 1000) {
            inLastMinute = true;
            if (options.lastMinute)
                options.lastMinute();
        }
        out.samples.push_back(
            {double(clock.nsecsElapsed()) / 1e9, statusKb("VmRSS:"), processRssKb(launcherPid)});
    });
    out.ticks.reserve(size_t(options.seconds) * 100 + 1000);
    tick.start(tickMs);
    sample.start(options.sampleMs);
    if (options.turnPages)
        turn.start(1000);
    const qint64 soakMs = qint64(options.seconds) * 1000;
    waitFor([&] { return clock.elapsed() >= soakMs || isTerminal(run->state()); },
            int(soakMs) + 10000, 100);
    out.samples.push_back(
        {double(clock.nsecsElapsed()) / 1e9, statusKb("VmRSS:"), processRssKb(launcherPid)});
    tick.stop();
    turn.stop();
    sample.stop();
    out.seconds = double(clock.elapsed()) / 1000.0;
    if (isTerminal(run->state())) {
        stopLauncher();
        out.error = QStringLiteral("the run ended during the soak: %1 %2")
                        .arg(runStateLabel(run->state()), run->rootCauseSummary());
        return out;
    }

    // The CLI on a run that has printed for the whole soak, still printing.
    out.showMs = timeCli(cli, {QStringLiteral("show"), out.runId}, false);
    out.followFirstMs =
        timeCli(cli, {QStringLiteral("logs"), out.runId, QStringLiteral("--follow")}, true);

    QProcess stop;
    stop.start(cli, {QStringLiteral("stop"), out.runId});
    stop.waitForFinished(60000);
    if (!launcher.waitForFinished(120000)) {
        stopLauncher();
        out.error = QStringLiteral("the launcher did not end within 120 s of `stop`");
        return out;
    }
    // The window's run ends too, with every byte of the record read.
    waitFor([&] { return isTerminal(run->state()); }, 60000, 100);

    const QString dir = run->runDirectory();
    for (int r = 0; r < options.ranks; ++r) {
        const QString log = dir + QStringLiteral("/rank-%1.log").arg(r);
        qint64 lines = 0, wrote = -1, gaps = 0;
        rankLogCount(log, r, &lines, &wrote, &gaps);
        out.recorded += lines;
        out.gaps += gaps;
        out.logBytes += QFileInfo(log).size();
        out.recordLines += newlines(log);
        if (wrote < 0) {
            ++out.ranksWithoutCount;
            continue;
        }
        out.printed += wrote;
        out.missing += std::max<qint64>(0, wrote - lines);
    }
    QDirIterator files(dir, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (files.hasNext()) {
        files.next();
        // On disk: the blocks a file holds, not its length (a log's compressed part is freed).
        struct stat st
        {
        };
        if (::stat(QFile::encodeName(files.filePath()).constData(), &st) != 0)
            continue;
        const qint64 bytes = qint64(st.st_blocks) * 512;
        out.recordBytes += bytes;
        // What the bytes are: the rank number and a segment's range left out of the names.
        static const QRegularExpression range(QStringLiteral("\\.\\d+-\\d+\\.zst\\z"));
        QString kind = files.fileName();
        kind.replace(range, QStringLiteral(".*.zst"));
        if (kind.startsWith(QLatin1String("rank-")))
            kind = QStringLiteral("rank-*") + kind.mid(kind.indexOf(u'.'));
        out.recordBytesByKind[kind] += bytes;
    }
    // The ranks' step counts are in their last words ("wrote N lines, M steps").
    for (int r = 0; r < options.ranks; ++r) {
        QFile log(dir + QStringLiteral("/rank-%1.log").arg(r));
        if (!log.open(QIODevice::ReadOnly))
            continue;
        log.seek(std::max<qint64>(0, log.size() - 4096));
        const QByteArray text = log.readAll();
        const qsizetype at = text.lastIndexOf(" lines, ");
        if (at >= 0)
            out.pointsDue +=
                text.mid(at + 8).split(' ').value(0).toLongLong() * (6 + options.scalars);
    }
    out.pointsInGui = run->metricsStore()->totalPoints();
    if (out.ranksWithoutCount > 0 || out.gaps > 0)
        out.error = QStringLiteral("%1 ranks without their count, %2 gaps in the record")
                        .arg(out.ranksWithoutCount)
                        .arg(out.gaps);
    return out;
}

} // namespace rankdeck::bench
