// SPDX-License-Identifier: GPL-3.0-or-later
//
// The last minute of every rank's sample windows (SampleWindow), from the first window spent
// mostly training (its start-up dropped), and their sum over the last seconds: what
// SlowRankAnalysis compares every 2 s. Bounded per rank, whatever the run's
// length; only the launcher's thread touches it.
#pragma once

#include "store/samplewindow.h"

#include <QHash>
#include <QList>
#include <QMap>
#include <QSet>

#include <deque>

namespace rankdeck {

struct SampleSummary
{
    SampledPart main;
    SampledPart others;
    int windows = 0;
    qint64 seconds = 0;  // wall time the windows cover
    ProcessShares proc;  // means over the windows, weighted by their lengths
    qint64 rssBytes = 0; // the last
    qint64 samplerCpuNs = 0;
    qint64 coveredMs = 0;
};

class SampleStore
{
public:
    static constexpr qint64 kKeepUs = 60'000'000;

    void add(int rank, const SampleWindow &window);
    void clear()
    {
        m_windows.clear();
        m_training.clear();
    }
    // Of a window's samples, those in the categories of training (data, forward, backward,
    // optimizer, collective).
    static double trainingShare(const SampledPart &part);
    bool isEmpty() const { return m_windows.empty(); }
    // Every rank's windows that ended in the last `windowUs` before its newest one.
    QMap<int, SampleSummary> summaries(qint64 windowUs) const;
    // Changes whenever a window comes.
    quint64 generation() const { return m_generation; }

private:
    QHash<int, std::deque<SampleWindow>> m_windows;
    QSet<int> m_training; // ranks past their start-up
    quint64 m_generation = 0;
};

} // namespace rankdeck
