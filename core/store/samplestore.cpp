// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/samplestore.h"

#include <algorithm>

namespace rankdeck {

void SampleStore::add(int rank, const SampleWindow &window)
{
    std::deque<SampleWindow> &windows = m_windows[rank];
    // A rank's start-up (importing torch, forming the process group) is no part of how it
    // trains: its windows go once the first window spent mostly in training comes.
    if (!m_training.contains(rank) && trainingShare(window.main) >= 0.5) {
        m_training.insert(rank);
        windows.clear();
    }
    windows.push_back(window);
    while (windows.size() > 1 && windows.front().timeUs < window.timeUs - kKeepUs)
        windows.pop_front();
    while (windows.size() > 600) // a stream with absurd timestamps stays bounded too
        windows.pop_front();
    ++m_generation;
}

double SampleStore::trainingShare(const SampledPart &part)
{
    if (part.samples <= 0)
        return 0;
    int training = 0;
    for (const char *c : {"data", "forward", "backward", "optimizer", "collective"})
        training += part.categories.value(QLatin1String(c));
    return double(training) / part.samples;
}

QMap<int, SampleSummary> SampleStore::summaries(qint64 windowUs) const
{
    QMap<int, SampleSummary> out;
    for (auto it = m_windows.cbegin(); it != m_windows.cend(); ++it) {
        const std::deque<SampleWindow> &windows = it.value();
        if (windows.empty())
            continue;
        SampleSummary s;
        const qint64 newest = windows.back().timeUs;
        double weights = 0;
        // Newest first, back to the window's start.
        for (std::size_t i = windows.size(); i-- > 0;) {
            const SampleWindow *w = &windows[i];
            if (w->timeUs <= newest - windowUs)
                break;
            const double weight = std::max(1, w->windowMs);
            s.main.add(w->main);
            s.others.add(w->others);
            ++s.windows;
            s.coveredMs += w->windowMs;
            weights += weight;
            for (double ProcessShares::*f : ProcessShares::kFields)
                s.proc.*f += w->proc.*f * weight;
            s.samplerCpuNs += w->samplerCpuNs;
        }
        for (double ProcessShares::*f : ProcessShares::kFields)
            s.proc.*f /= weights;
        s.rssBytes = windows.back().rssBytes;
        s.seconds = s.coveredMs / 1000;
        out.insert(it.key(), s);
    }
    return out;
}

} // namespace rankdeck
