// SPDX-License-Identifier: GPL-3.0-or-later
//
// bench_logcollapse: what collapsing identical lines costs the merged log view. 1,000,000 lines
// (200,000 with --quick) from 64 ranks, half of them the same line on every rank ("NCCL INFO …
// step N"), half each rank's own, go into a LogStore (memory only) in batches of 4,096 (what one
// 40 ms tick of the logs page sees at ~100k lines/s), each batch followed by a poll of the merged
// LogModel, with or without a CollapsedLogModel over it. Each variant runs in a child process of
// its own (--phase plain|collapse) so that peak memory belongs to one of them. Reports lines/s
// through store, model and grouping, the rows left and created, and resident memory.
// Prints one JSON line: {"results": {...}, "detail": "..."}.
#include "models/collapsedlogmodel.h"
#include "models/logmodel.h"
#include "store/logstore.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>

#include <algorithm>
#include <cstdio>

using namespace rankdeck;

namespace {

constexpr int kRanks = 64;
constexpr int kBatch = 4096;

double statusMb(const char *key)
{
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : f.readAll().split('\n')) {
        if (line.startsWith(key))
            return line.mid(qstrlen(key)).trimmed().split(' ').value(0).toDouble() / 1024.0;
    }
    return -1;
}

int phase(bool collapse, qint64 total)
{
    LogStore store;
    LogModel source(&store, LogStore::AllRanks);
    source.setPollInterval(0);
    CollapsedLogModel collapsed;
    if (collapse)
        collapsed.setSourceModel(&source);
    const double rssBefore = statusMb("VmRSS:");
    const qint64 baseUs = 1'700'000'000'000'000;
    QList<LogLine> batch;
    batch.reserve(kBatch);
    qint64 timedNs = 0; // appending and polling only, not making the lines
    QElapsedTimer timer;
    for (qint64 i = 0; i < total; ++i) {
        const qint64 step = i / kRanks / 2;
        const int rank = int(i % kRanks);
        const bool shared = (i / kRanks) % 2 == 0;
        LogLine l;
        l.rank = rank;
        l.timeUs = baseUs + step * 5000 + qint64(rank) * 10;
        l.text = shared
                     ? QStringLiteral("NCCL INFO comm 0x55d1c2 nRanks 64 - Init COMPLETE step %1")
                           .arg(step)
                     : QStringLiteral("rank %1 step %2 loss %3").arg(rank).arg(step).arg(i);
        l.raw = l.text.toUtf8();
        batch.append(std::move(l));
        if (batch.size() == kBatch || i + 1 == total) {
            timer.start();
            store.append(batch);
            source.poll();
            timedNs += timer.nsecsElapsed();
            batch.clear();
        }
    }
    qint64 created = 0;
    const double seconds = timedNs / 1e9;
    if (collapse)
        created = total - collapsed.joinedLines();
    QJsonObject r;
    r[QStringLiteral("lines")] = double(total);
    r[QStringLiteral("seconds")] = seconds;
    r[QStringLiteral("lines_per_s")] = total / seconds;
    r[QStringLiteral("source_rows")] = source.rowCount();
    r[QStringLiteral("rows")] = collapse ? collapsed.rowCount() : source.rowCount();
    r[QStringLiteral("groups")] = collapse ? collapsed.groupCount() : 0;
    r[QStringLiteral("created")] = double(collapse ? created : total);
    r[QStringLiteral("rss_mb")] = statusMb("VmRSS:") - rssBefore;
    r[QStringLiteral("peak_mb")] = statusMb("VmHWM:");
    std::printf("%s\n", QJsonDocument(r).toJson(QJsonDocument::Compact).constData());
    return 0;
}

QJsonObject runPhase(const QString &name, bool quick)
{
    QProcess p;
    p.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    QStringList args{QStringLiteral("--phase"), name};
    if (quick)
        args << QStringLiteral("--quick");
    p.start(QCoreApplication::applicationFilePath(), args);
    p.waitForFinished(-1);
    const QList<QByteArray> lines = p.readAllStandardOutput().trimmed().split('\n');
    return QJsonDocument::fromJson(lines.value(lines.size() - 1)).object();
}

double median(QList<double> v)
{
    if (v.isEmpty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const QStringList args = QCoreApplication::arguments();
    const bool quick = args.contains(QStringLiteral("--quick"));
    const qint64 total = quick ? 200'000 : 1'000'000;
    const int repsAt = int(args.indexOf(QStringLiteral("--reps")));
    const int reps = repsAt > 0 ? std::max(1, args.value(repsAt + 1).toInt()) : 5;
    const int phaseAt = int(args.indexOf(QStringLiteral("--phase")));
    if (phaseAt > 0)
        return phase(args.value(phaseAt + 1) == QLatin1String("collapse"), total);

    QList<double> plain, collapse;
    QJsonObject last, lastPlain;
    // Alternating, so that a noisy neighbour hurts both alike.
    for (int i = 0; i < reps; ++i) {
        lastPlain = runPhase(QStringLiteral("plain"), quick);
        last = runPhase(QStringLiteral("collapse"), quick);
        if (lastPlain.isEmpty() || last.isEmpty()) {
            std::printf("{\"results\": {}, \"detail\": \"a phase printed no result\"}\n");
            return 1;
        }
        plain << lastPlain[QStringLiteral("lines_per_s")].toDouble();
        collapse << last[QStringLiteral("lines_per_s")].toDouble();
    }
    QJsonObject results;
    results[QStringLiteral("log_collapse_lines_per_s")] = median(collapse);
    QJsonArray runs;
    for (double v : collapse)
        runs.append(v);
    results[QStringLiteral("log_collapse_lines_per_s_runs")] = runs;
    QJsonObject out;
    out[QStringLiteral("results")] = results;
    out[QStringLiteral("detail")] =
        QStringLiteral("%1 lines from %2 ranks (half the same on every rank) through LogStore, "
                       "the merged LogModel and CollapsedLogModel: %3 lines/s (without collapsing "
                       "%4 lines/s; median of %5); %6 rows shown of the model's %7 lines, %8 "
                       "groups; %9 rows created for all lines; %10 MB more resident (peak %11 MB; "
                       "without collapsing %12 MB, peak %13 MB)")
            .arg(total)
            .arg(kRanks)
            .arg(median(collapse), 0, 'f', 0)
            .arg(median(plain), 0, 'f', 0)
            .arg(reps)
            .arg(last[QStringLiteral("rows")].toInt())
            .arg(last[QStringLiteral("source_rows")].toInt())
            .arg(last[QStringLiteral("groups")].toInt())
            .arg(last[QStringLiteral("created")].toDouble(), 0, 'f', 0)
            .arg(last[QStringLiteral("rss_mb")].toDouble(), 0, 'f', 1)
            .arg(last[QStringLiteral("peak_mb")].toDouble(), 0, 'f', 1)
            .arg(lastPlain[QStringLiteral("rss_mb")].toDouble(), 0, 'f', 1)
            .arg(lastPlain[QStringLiteral("peak_mb")].toDouble(), 0, 'f', 1);
    std::printf("%s\n", QJsonDocument(out).toJson(QJsonDocument::Compact).constData());
    return 0;
}
