// SPDX-License-Identifier: GPL-3.0-or-later
//
// One `samples` event as data (docs/protocol.md): what a supervised rank's main thread, and its
// other processes (DataLoader workers), were doing over one window, by category and by the
// program's own innermost frame, with the /proc counters of the same window. Summed over the
// last seconds (SampleStore::summary) they are what diagnosis/SlowRankAnalysis compares.
#pragma once

#include <QHash>
#include <QList>
#include <QString>

namespace rankdeck {

class WorkerEvent;

struct SampledFrame
{
    QString frame;    // "Samples.__getitem__ (data.py:41)"
    QString category; // data, forward, backward, optimizer, collective, other
    int count = 0;
};

struct SampledPart
{
    int samples = 0;
    QHash<QString, int> categories;
    QList<SampledFrame> frames; // the most sampled first (at most the event's top frames)

    void add(const SampledPart &other);
};

// A window's /proc shares (of the wall clock) and rates, or their means over several.
struct ProcessShares
{
    double cpuShare = 0;      // the main thread on a CPU
    double runQueueShare = 0; // the main thread waiting for one
    double processCpu = 0;    // every thread of the process, cores
    double othersCpu = 0;     // its other processes, cores
    double othersRunQueue = 0;
    double blockIoShare = 0;
    double readBytesPerSec = 0;
    double majorFaultsPerSec = 0;
    double throttledShare = 0;

    // Every field, for sums and means.
    static constexpr double ProcessShares::*kFields[] = {
        &ProcessShares::cpuShare,        &ProcessShares::runQueueShare,
        &ProcessShares::processCpu,      &ProcessShares::othersCpu,
        &ProcessShares::othersRunQueue,  &ProcessShares::blockIoShare,
        &ProcessShares::readBytesPerSec, &ProcessShares::majorFaultsPerSec,
        &ProcessShares::throttledShare};
};

struct SampleWindow
{
    qint64 timeUs = 0; // the window's end (the rank's clock)
    int windowMs = 0;
    double hz = 0;
    SampledPart main;   // the program's main thread
    SampledPart others; // its other processes' main threads
    ProcessShares proc;
    double involuntarySwitchesPerSec = 0;
    qint64 rssBytes = 0;
    qint64 samplerCpuNs = 0;

    static SampleWindow fromEvent(const WorkerEvent &event);
};

} // namespace rankdeck
