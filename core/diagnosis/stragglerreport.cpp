// SPDX-License-Identifier: GPL-3.0-or-later
#include "diagnosis/stragglerreport.h"

#include "diagnosis/failuregrouping.h"
#include "store/metricsstore.h"
#include "util/translation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace rankdeck {

namespace {

double median(std::vector<double> v)
{
    if (v.empty())
        return std::nan("");
    const auto mid = v.begin() + qsizetype(v.size() / 2);
    std::nth_element(v.begin(), mid, v.end());
    if (v.size() % 2 == 1)
        return *mid;
    const double upper = *mid;
    return (*std::max_element(v.begin(), mid) + upper) / 2.0;
}

QString ms(double v)
{
    return v >= 100 ? QString::number(v, 'f', 0) : QString::number(v, 'g', 3);
}

} // namespace

StragglerReport StragglerReport::analyze(const MetricsStore &store,
                                         const QHash<int, QString> &hosts)
{
    StragglerReport r;
    struct Rank
    {
        int rank;
        double work;
        double wait;
    };
    std::vector<Rank> ranks;
    const QList<int> withSteps = store.ranks(metric::StepTimeMs);
    bool allWaits = !withSteps.isEmpty();
    for (int rank : withSteps)
        allWaits = allWaits && store.pointCount(rank, metric::CommWaitMs) > 0;
    r.commWaitKnown = allWaits;
    r.window = kWindow;
    for (int rank : withSteps) {
        const QList<MetricPoint> steps = store.tail(rank, metric::StepTimeMs, kWindow);
        const QList<MetricPoint> waits =
            allWaits ? store.tail(rank, metric::CommWaitMs, kWindow) : QList<MetricPoint>();
        // Both tails ascend by step (one segment each): each step's wait by a merge, no hash
        // (512 ranks × 100 steps at every refresh of the Overview).
        qsizetype next = 0;
        const auto waitAt = [&](qint64 step) {
            while (next < waits.size() && waits[next].step < step)
                ++next;
            return next < waits.size() && waits[next].step == step ? waits[next].value : 0.0;
        };
        std::vector<double> work, wait;
        work.reserve(size_t(steps.size()));
        wait.reserve(size_t(steps.size()));
        for (const MetricPoint &p : steps) {
            const double w = waitAt(p.step);
            if (!std::isfinite(p.value))
                continue;
            work.push_back(std::max(0.0, p.value - (std::isfinite(w) ? w : 0.0)));
            wait.push_back(std::isfinite(w) ? w : 0.0);
        }
        if (work.empty())
            continue;
        r.window = std::min(r.window, int(work.size()));
        ranks.push_back(Rank{rank, median(work), median(wait)});
    }
    r.ranksCompared = int(ranks.size());
    if (ranks.size() < 2)
        return r;
    // The slowest rank against the median of all the others.
    const auto slowest = std::max_element(
        ranks.begin(), ranks.end(), [](const Rank &a, const Rank &b) { return a.work < b.work; });
    std::vector<double> others, othersWait;
    for (const Rank &k : ranks) {
        if (k.rank != slowest->rank) {
            others.push_back(k.work);
            othersWait.push_back(k.wait);
        }
    }
    r.othersWorkMs = median(others);
    r.workMs = slowest->work;
    r.ratio = r.othersWorkMs > 0 ? r.workMs / r.othersWorkMs
                                 : (r.workMs > 0 ? std::numeric_limits<double>::infinity() : 1.0);
    // A millisecond of difference is scheduling noise, whatever the ratio.
    if (r.ratio < kSlowRatio || r.workMs - r.othersWorkMs < 1.0) {
        r.rank = -1;
        return r;
    }
    r.rank = slowest->rank;
    r.host = hosts.value(r.rank);
    r.stragglerWaitMs = slowest->wait;
    if (allWaits) {
        // Waiting for it: at least a third of the straggler's extra work spent in communication.
        const double threshold = std::max(1.0, (r.workMs - r.othersWorkMs) / 3.0);
        std::vector<double> waits;
        for (const Rank &k : ranks) {
            if (k.rank != r.rank && k.wait >= threshold && k.wait > slowest->wait) {
                r.waitingRanks << k.rank;
                waits.push_back(k.wait);
            }
        }
        r.waitingMs = median(waits);
    }
    return r;
}

QString StragglerReport::text() const
{
    if (ranksCompared < 2)
        return {};
    const QString over =
        window == 1 ? tr("over the last step") : tr("over the last %1 steps").arg(window);
    if (!found())
        return tr("No straggler: every rank's median step is within %1× of the others' %2.")
            .arg(QString::number(kSlowRatio, 'g', 3), over);
    const QString who =
        host.isEmpty() ? tr("rank %1").arg(rank) : tr("rank %1 on %2").arg(rank).arg(host);
    const QString what = commWaitKnown
                             ? tr("%1 ms of work against %2 ms, communication wait excluded")
                                   .arg(ms(workMs), ms(othersWorkMs))
                             : tr("%1 ms against %2 ms").arg(ms(workMs), ms(othersWorkMs));
    QString s = tr("%1: median step %2× the others' %3 (%4).")
                    .arg(who, QString::number(ratio, 'f', 1), over, what);
    if (!waitingRanks.isEmpty()) {
        const QString ranks = waitingRanks.size() == 1
                                  ? tr("Rank %1 waits").arg(waitingRanks.first())
                                  : tr("Ranks %1 wait").arg(formatRankRanges(waitingRanks));
        s += QLatin1Char(' ') +
             tr("%1 for it (median communication wait %2 ms against %3 ms on rank %4).")
                 .arg(ranks, ms(waitingMs), ms(stragglerWaitMs))
                 .arg(rank);
    }
    return s;
}

} // namespace rankdeck
