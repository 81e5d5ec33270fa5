// SPDX-License-Identifier: GPL-3.0-or-later
#include "diagnosis/slowrankanalysis.h"

#include "diagnosis/failuregrouping.h"
#include "util/median.h"
#include "util/translation.h"

#include <QRegularExpression>

#include <algorithm>
#include <cmath>
#include <vector>

namespace rankdeck {
namespace {

const QStringList &waitCategories()
{
    static const QStringList c{QStringLiteral("backward"), QStringLiteral("collective")};
    return c;
}

double shareOf(const SampledPart &p, const QString &category)
{
    return p.samples > 0 ? double(p.categories.value(category)) / p.samples : 0.0;
}

double waitShareOf(const SampledPart &p)
{
    double s = 0;
    for (const QString &c : waitCategories())
        s += shareOf(p, c);
    return s;
}

// Of the time the main thread was runnable, the share it waited for a CPU.
double starvedShare(const SampleSummary &s)
{
    const double wanted = s.proc.cpuShare + s.proc.runQueueShare;
    return wanted > 0.02 ? s.proc.runQueueShare / wanted : 0.0;
}

QString percent(double v)
{
    return QStringLiteral("%1 %").arg(qRound(v * 100));
}

// "Samples.__getitem__ (data.py:41)" → "Samples.__getitem__ (data.py": a function, whatever
// line it was sampled at.
QString function(const QString &frame)
{
    static const QRegularExpression line(QStringLiteral(":\\d+\\)$"));
    QString f = frame;
    f.remove(line);
    return f;
}

struct FunctionCount
{
    QString function;
    QString bestFrame;
    int count = 0;
    int bestCount = 0;
};

// The rank's samples by function within `category` (or all, empty), most first.
QList<FunctionCount> functions(const SampledPart &p, const QString &category)
{
    QList<FunctionCount> out;
    for (const SampledFrame &f : p.frames) {
        if (!category.isEmpty() && f.category != category)
            continue;
        const QString fn = function(f.frame);
        auto it = std::find_if(out.begin(), out.end(),
                               [&](const FunctionCount &c) { return c.function == fn; });
        if (it == out.end()) {
            out.append({fn, f.frame, f.count, f.count});
            continue;
        }
        it->count += f.count;
        if (f.count > it->bestCount) {
            it->bestCount = f.count;
            it->bestFrame = f.frame;
        }
    }
    std::stable_sort(out.begin(), out.end(), [](const FunctionCount &a, const FunctionCount &b) {
        return a.count > b.count;
    });
    return out;
}

QString categoryWord(const QString &category)
{
    if (category == u"data")
        return tr("data loading");
    if (category == u"forward")
        return tr("forward");
    if (category == u"backward")
        return tr("backward (gradient sync)");
    if (category == u"optimizer")
        return tr("optimizer");
    if (category == u"collective")
        return tr("collectives");
    return tr("own code");
}

// "backward (gradient sync) 98 %, data loading 1 %": the categories of a sum, largest first.
QString split(const SampledPart &p)
{
    QList<QPair<int, QString>> parts;
    for (auto it = p.categories.cbegin(); it != p.categories.cend(); ++it)
        parts.append({it.value(), it.key()});
    std::sort(parts.begin(), parts.end(), [](const auto &a, const auto &b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    QStringList words;
    for (const auto &[count, category] : parts)
        if (p.samples > 0 && double(count) / p.samples >= 0.01)
            words << QStringLiteral("%1 %2").arg(categoryWord(category),
                                                 percent(double(count) / p.samples));
    return words.join(QStringLiteral(", "));
}

// Where the job's time goes: one split over every rank, or one per node when the ranks run on
// several ("node-a (ranks 0-3): compute 62 %, …; node-b (ranks 4-7): …"), so that a node whose
// ranks spend their time elsewhere stands out even when no single rank is a straggler.
QString jobSplit(const QMap<int, SampleSummary> &ranks, const QHash<int, QString> &hosts)
{
    QMap<QString, SampledPart> byHost;
    QMap<QString, QList<int>> ranksOf;
    bool everyHostKnown = true;
    for (auto it = ranks.cbegin(); it != ranks.cend(); ++it) {
        const QString host = hosts.value(it.key());
        everyHostKnown = everyHostKnown && !host.isEmpty();
        byHost[host].add(it->main);
        ranksOf[host].append(it.key());
    }
    if (byHost.size() < 2 || !everyHostKnown) {
        SampledPart job;
        for (const SampleSummary &s : ranks)
            job.add(s.main);
        return split(job);
    }
    QStringList lines;
    for (auto it = byHost.cbegin(); it != byHost.cend(); ++it) {
        const QList<int> &members = ranksOf[it.key()];
        const QString who = members.size() == 1 ? tr("rank %1").arg(members.first())
                                                : tr("ranks %1").arg(formatRankRanges(members));
        lines << tr("%1 (%2): %3").arg(it.key(), who, split(it.value()));
    }
    return lines.join(QStringLiteral("; "));
}

QString procLine(const SampleSummary &s)
{
    QString line = tr("on a CPU %1, waiting for one %2")
                       .arg(percent(s.proc.cpuShare), percent(s.proc.runQueueShare));
    if (s.proc.othersCpu >= 0.05)
        line += tr(", its other processes (DataLoader workers, children) %1 of a core")
                    .arg(percent(s.proc.othersCpu));
    if (s.proc.blockIoShare >= 0.01)
        line += tr(", blocked on disk I/O %1").arg(percent(s.proc.blockIoShare));
    if (s.proc.throttledShare >= 0.01)
        line += tr(", cgroup throttled %1").arg(percent(s.proc.throttledShare));
    if (s.proc.majorFaultsPerSec >= 1)
        line += tr(", %1 major faults/s").arg(qRound(s.proc.majorFaultsPerSec));
    // What watching costs: the sampling thread's CPU, of the process's.
    if (s.proc.processCpu > 0 && s.coveredMs > 0)
        line += tr(", sampling %1 % of its CPU")
                    .arg(100.0 * double(s.samplerCpuNs) /
                             (s.proc.processCpu * double(s.coveredMs) * 1e6),
                         0, 'f', 2);
    line += tr(", reads %1 KB/s, RSS %2 MB")
                .arg(qRound(s.proc.readBytesPerSec / 1000))
                .arg(s.rssBytes / 1000000);
    return line;
}

} // namespace

QString SlowRankVerdict::causeWord(Cause cause)
{
    switch (cause) {
    case Cause::InputBound:
        return tr("input-bound");
    case Cause::CpuStarved:
        return tr("CPU-starved");
    case Cause::IoBound:
        return tr("I/O-bound");
    case Cause::ComputeBound:
        return tr("compute-bound");
    case Cause::MemoryPressure:
        return tr("under memory pressure");
    case Cause::None:
        break;
    }
    return {};
}

QString SlowRankVerdict::causeKey(Cause cause)
{
    switch (cause) {
    case Cause::InputBound:
        return QStringLiteral("input");
    case Cause::CpuStarved:
        return QStringLiteral("cpu-starved");
    case Cause::IoBound:
        return QStringLiteral("io");
    case Cause::ComputeBound:
        return QStringLiteral("compute");
    case Cause::MemoryPressure:
        return QStringLiteral("memory");
    case Cause::None:
        break;
    }
    return {};
}

SlowRankVerdict::Cause SlowRankVerdict::causeFromKey(const QString &key)
{
    for (Cause c : {Cause::InputBound, Cause::CpuStarved, Cause::IoBound, Cause::ComputeBound,
                    Cause::MemoryPressure})
        if (causeKey(c) == key)
            return c;
    return Cause::None;
}

SlowRankVerdict SlowRankVerdict::fromRecord(int rank, const QString &causeKey, const QString &text,
                                            const QString &timeSplit, const QStringList &details)
{
    SlowRankVerdict v;
    v.rank = rank >= 0 ? rank : -1;
    v.cause = causeFromKey(causeKey);
    v.recordedText = v.rank >= 0 ? text : QString();
    v.timeSplit = timeSplit;
    v.details = details;
    return v;
}

QString SlowRankVerdict::text() const
{
    if (!recordedText.isEmpty())
        return recordedText;
    if (!found())
        return timeSplit.isEmpty() ? QString() : tr("where the time goes: %1").arg(timeSplit);
    const QString who =
        host.isEmpty() ? tr("rank %1").arg(rank) : tr("rank %1 (%2)").arg(rank).arg(host);
    QString s = tr("%1 is the straggler, %2: %3 of its time in %4 at %5, against %6 on the "
                   "other ranks, which spend %7 waiting")
                    .arg(who, causeWord(cause), percent(share), categoryWord(category), frame,
                         percent(othersShare), percent(othersWaitShare));
    if (!othersWaitFrame.isEmpty())
        s += QLatin1Char(' ') + othersWaitFrame;
    s += tr("; it waits %1").arg(percent(waitShare));
    if (!evidence.isEmpty())
        s += tr(". %1").arg(evidence);
    return s;
}

QString SlowRankVerdict::bannerText() const
{
    const QString full = text();
    const QString said = tr(" is the straggler, ");
    const qsizetype at = full.indexOf(said);
    return at < 0 ? full : full.left(at) + QStringLiteral(", ") + full.mid(at + said.size());
}

QString SlowRankVerdict::summary() const
{
    if (!found())
        return {};
    return tr("rank %1 %2: %3 %4 vs %5")
        .arg(rank)
        .arg(causeWord(cause), frame, percent(share), percent(othersShare));
}

SlowRankVerdict SlowRankVerdict::analyze(const QMap<int, SampleSummary> &ranks,
                                         const QHash<int, QString> &hosts)
{
    SlowRankVerdict v;
    QMap<int, SampleSummary> compared;
    for (auto it = ranks.cbegin(); it != ranks.cend(); ++it)
        if (it->main.samples >= kMinSamples)
            compared.insert(it.key(), it.value());
    v.ranksCompared = int(compared.size());
    for (auto it = compared.cbegin(); it != compared.cend(); ++it)
        v.details << tr("rank %1: %2; %3").arg(it.key()).arg(split(it->main), procLine(it.value()));
    v.timeSplit = jobSplit(compared, hosts);
    if (compared.size() < 2)
        return v;

    // Who: the rank that waits least, far less than the others.
    int candidate = -1;
    double least = 2;
    for (auto it = compared.cbegin(); it != compared.cend(); ++it)
        if (const double w = waitShareOf(it->main); w < least) {
            least = w;
            candidate = it.key();
        }
    std::vector<double> othersWait, othersStarvedShares, othersThrottled, othersFaults;
    SampledPart others;
    for (auto it = compared.cbegin(); it != compared.cend(); ++it) {
        if (it.key() == candidate)
            continue;
        othersWait.push_back(waitShareOf(it->main));
        othersStarvedShares.push_back(starvedShare(it.value()));
        othersThrottled.push_back(it->proc.throttledShare);
        othersFaults.push_back(it->proc.majorFaultsPerSec);
        others.add(it->main);
    }
    const double othersWaitMedian = median(othersWait);
    // Every other rank waits: one that does not is a second slow rank, and then the job's
    // slowness is not one rank's.
    const double othersWaitLeast = *std::min_element(othersWait.begin(), othersWait.end());
    const SampleSummary &s = compared[candidate];
    // A rank starved of CPU is slow in all it does, backward's own work too, so its wait
    // stands out less; its run queue says so plainly, and then a smaller gap names it.
    // Starved is judged on the share of the time a thread wanted a CPU that it spent waiting
    // for one: on a machine busy with other work every rank waits alike (the others barely
    // run, so their absolute waits say nothing), a starved rank far more.
    const double starved = starvedShare(s);
    const double othersStarved = median(othersStarvedShares);
    const bool plainlyStarved =
        starved >= kPlainlyStarved && starved - othersStarved >= kMinStarvedGap;
    const double minGap = plainlyStarved ? kMinWaitGapStarved : kMinWaitGap;
    if (othersWaitMedian < kMinOthersWait || othersWaitMedian - least < minGap ||
        othersWaitLeast - least < minGap / 2)
        return v;

    // Where: the category it spends more in than the others, and its function there.
    QString category;
    double excess = 0;
    QStringList categories = s.main.categories.keys();
    std::sort(categories.begin(), categories.end());
    for (const QString &c : std::as_const(categories)) {
        if (waitCategories().contains(c))
            continue;
        double theirs = 0;
        for (auto it = compared.cbegin(); it != compared.cend(); ++it)
            if (it.key() != candidate)
                theirs += shareOf(it->main, c);
        theirs /= double(compared.size() - 1);
        if (const double d = shareOf(s.main, c) - theirs; d > excess) {
            excess = d;
            category = c;
        }
    }
    if (excess < (plainlyStarved ? 0.0 : kMinExcess) || category.isEmpty())
        return v;
    QList<FunctionCount> mine = functions(s.main, category);
    if (mine.isEmpty())
        return v;
    // Which of them: the one where it spends more than the others do, over all it does (a
    // differential profile). A script's loop line (<module>, Trainer.fit's caller) holds the
    // library's time below it, a DataLoader's fetch and collate among it, and samples taken
    // in-process land there more often than its time warrants: a thread that holds the GIL in
    // pure Python (a Dataset's loop) lets the sampler in at its next release, often in collate.
    // But the other ranks spend even more there, waiting under it; the Dataset's function they
    // never run. (Lightning: its __getitem__ had a third of <module>'s data samples.)
    const auto shareAnywhere = [](const SampledPart &p, const QString &fn) {
        int n = 0;
        for (const FunctionCount &f : functions(p, QString()))
            if (f.function == fn)
                n += f.count;
        return p.samples > 0 ? double(n) / p.samples : 0.0;
    };
    qsizetype mostMore = -1;
    double more = 0;
    for (qsizetype i = 0; i < mine.size(); ++i) {
        double theirs = 0;
        for (auto it = compared.cbegin(); it != compared.cend(); ++it)
            if (it.key() != candidate)
                theirs += shareAnywhere(it->main, mine[i].function);
        theirs /= double(compared.size() - 1);
        if (const double d = shareAnywhere(s.main, mine[i].function) - theirs; d > more) {
            more = d;
            mostMore = i;
        }
    }
    if (mostMore > 0)
        mine.move(mostMore, 0);
    v.rank = candidate;
    v.host = hosts.value(candidate);
    v.category = category;
    v.frame = mine.first().bestFrame;
    v.share = double(mine.first().count) / s.main.samples;
    double theirs = 0;
    // The same function doing the same thing: a script's <module> is the whole loop.
    for (auto it = compared.cbegin(); it != compared.cend(); ++it) {
        if (it.key() == candidate)
            continue;
        for (const FunctionCount &f : functions(it->main, category))
            if (f.function == mine.first().function)
                theirs += double(f.count) / it->main.samples;
    }
    v.othersShare = theirs / double(compared.size() - 1);
    v.waitShare = least;
    v.othersWaitShare = othersWaitMedian;
    for (const SampledFrame &f : others.frames) // the most sampled first
        if (waitCategories().contains(f.category)) {
            v.othersWaitFrame = tr("in %1 at %2").arg(categoryWord(f.category), f.frame);
            break;
        }
    v.timeSplit = split(others);

    // Why, from /proc.
    const double throttledGap = s.proc.throttledShare - median(othersThrottled);
    if ((starved >= kMinStarved && starved - othersStarved >= kMinStarvedGap) ||
        (s.proc.throttledShare >= 0.10 && throttledGap >= 0.05)) {
        v.cause = Cause::CpuStarved;
        v.evidence = tr("When it wants to run it waits for a CPU %1 of the time (run queue), the "
                        "other ranks %2")
                         .arg(percent(starved), percent(othersStarved));
        if (s.proc.throttledShare >= 0.10)
            v.evidence +=
                tr("; its cgroup is throttled %1 of the time").arg(percent(s.proc.throttledShare));
    } else if (s.proc.majorFaultsPerSec >= 50 &&
               s.proc.majorFaultsPerSec > 5 * median(othersFaults) + 10) {
        v.cause = Cause::MemoryPressure;
        v.evidence = tr("%1 major page faults/s, against %2 on the others")
                         .arg(qRound(s.proc.majorFaultsPerSec))
                         .arg(qRound(median(othersFaults)));
    } else {
        // Busy is wanting a CPU, on one or waiting for one: on a machine shared with other work
        // (every rank waits for a CPU alike, so none is starved) a Dataset's loop may run only
        // 40 % of the time and wait 40 % for a core, and is no more I/O-bound for that.
        const double blocked = std::max(0.0, 1 - s.proc.cpuShare - s.proc.runQueueShare);
        const bool busy = blocked < 0.5 || (category == u"data" && s.proc.othersCpu >= 0.5);
        if (category == u"data")
            v.cause = busy ? Cause::InputBound : Cause::IoBound;
        else if (category == u"other")
            v.cause = busy ? Cause::ComputeBound : Cause::IoBound;
        else
            v.cause = Cause::ComputeBound;
        if (!busy)
            v.evidence =
                tr("It is off the CPU, blocked, %1 of the time (on a CPU %2, waiting "
                   "for one %3)")
                    .arg(percent(blocked), percent(s.proc.cpuShare), percent(s.proc.runQueueShare));
        else if (s.proc.runQueueShare >= 0.1)
            v.evidence = tr("It runs on a CPU %1 of the time and waits for one %2")
                             .arg(percent(s.proc.cpuShare), percent(s.proc.runQueueShare));
        else
            v.evidence = tr("It runs on a CPU %1 of the time").arg(percent(s.proc.cpuShare));
        if (category == u"data" && s.proc.othersCpu >= 0.05)
            v.evidence +=
                tr("; its DataLoader workers use %1 of a core").arg(percent(s.proc.othersCpu));
    }
    return v;
}

} // namespace rankdeck
