// SPDX-License-Identifier: GPL-3.0-or-later
//
// Why a job is slow, from the outside of an unmodified program: the straggler and its cause,
// from every rank's sampled stacks and /proc counters (SampleStore's last seconds).
//   - Who: in synchronous training every rank waits for the slowest one at the gradient sync.
//     The rank that spends the least of its time waiting (in backward, where DDP's all-reduce
//     completes, and in torch.distributed's calls) while the others wait most is the
//     straggler: "ranks 0, 1, 3 spend 98 % waiting in backward; rank 2 spends 40 %".
//   - Where: the category it spends more time in than the others do (a differential profile),
//     and in it the program's own function it is sampled in most, with both shares.
//   - Why: its /proc evidence classifies it: CPU-starved (it waits for a CPU: the run queue or
//     its cgroup's throttling), memory pressure (major faults), input-bound (the excess is in
//     the Dataset or the DataLoader while the rank or its workers run on a CPU), I/O-bound (the
//     excess is spent off the CPU, blocked), compute-bound (forward, optimizer, its own code).
// Thresholds are wide on purpose: a healthy job on a loaded machine must never name a rank
// (bench/run --only straggler counts the ones it did).
#pragma once

#include "store/samplestore.h"

#include <QHash>
#include <QMap>
#include <QString>
#include <QStringList>

namespace rankdeck {

struct SlowRankVerdict
{
    enum class Cause
    {
        None,
        InputBound,
        CpuStarved,
        IoBound,
        ComputeBound,
        MemoryPressure,
    };

    // A rank with fewer samples in the window is not compared (3 s at 20 Hz).
    static constexpr int kMinSamples = 60;
    // The straggler waits at least this much less (a share of its time) than the others'
    // median, which wait at least kMinOthersWait; its excess elsewhere is at least kMinExcess.
    static constexpr double kMinWaitGap = 0.25;
    static constexpr double kMinOthersWait = 0.35;
    static constexpr double kMinExcess = 0.15;
    // CPU-starved: of the time its main thread wanted a CPU, it waited for one at least this
    // share, that much more than the others' median.
    static constexpr double kMinStarved = 0.40;
    static constexpr double kMinStarvedGap = 0.20;
    // A rank that waits for a CPU at least this share of its runnable time is named with a
    // wait gap of kMinWaitGapStarved (and any excess elsewhere).
    static constexpr double kPlainlyStarved = 0.50;
    static constexpr double kMinWaitGapStarved = 0.10;

    int rank = -1; // -1: none named
    QString host;
    Cause cause = Cause::None;
    QString category;       // where its excess is (data, forward, other, …)
    QString frame;          // its function there, at its most sampled line
    double share = 0;       // of the straggler's samples in that function
    double othersShare = 0; // the others' mean share in it
    double waitShare = 0;   // the straggler's share waiting
    double othersWaitShare = 0;
    QString othersWaitFrame; // where the others wait
    QString evidence;        // the /proc sentence behind the cause
    QStringList details;     // per rank: where the time goes and the /proc counters
    QString timeSplit;       // the whole job, or the others: "waiting 98 %, data 1 %"
    int ranksCompared = 0;
    QString recordedText; // the sentence as a launcher wrote it (fromRecord): text() says it

    // A verdict another process's launcher judged and wrote (state.json's "slow").
    static SlowRankVerdict fromRecord(int rank, const QString &causeKey, const QString &text,
                                      const QString &timeSplit, const QStringList &details);

    bool found() const { return rank >= 0; }
    // One sentence for a banner, `show` and `runs`; empty when there is nothing to say.
    QString text() const;
    // The same for the Overview's banner, which says "Straggler:" before it: "rank 2 (vm),
    // input-bound: …" instead of "rank 2 (vm) is the straggler, input-bound: …". A recorded
    // text (a run another window drives) is shortened the same way.
    QString bannerText() const;
    // A few words: "rank 2 input-bound: Samples.__getitem__ (data.py:41) 71 % vs 4 %".
    QString summary() const;
    static QString causeWord(Cause cause);
    static QString causeKey(Cause cause); // for state.json: input, cpu-starved, io, compute, memory
    static Cause causeFromKey(const QString &key);

    static SlowRankVerdict analyze(const QMap<int, SampleSummary> &ranks,
                                   const QHash<int, QString> &hosts = {});
};

} // namespace rankdeck
