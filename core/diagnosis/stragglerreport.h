// SPDX-License-Identifier: GPL-3.0-or-later
//
// Which rank slows everyone down, in words. In synchronous data-parallel training every rank's
// step takes about as long as the slowest one's, because the others wait for it in the gradient
// all-reduce: the straggler is the rank whose step holds the most work (step time less its
// communication wait), and its peers are the ones with a high communication wait. Over the
// last 100 steps of each rank (medians, so one slow step is no straggler):
//     "rank 3 on gpu2: median step 1.8× the others' over the last 100 steps (412 ms of work
//      against 229 ms, communication wait excluded); ranks 0–2 wait for it (median
//      communication wait 180 ms against 2 ms on rank 3)"
// Without comm_wait_ms (a user's program logging only step_ms) the step time itself is compared.
#pragma once

#include <QHash>
#include <QList>
#include <QString>

namespace rankdeck {

class MetricsStore;

struct StragglerReport
{
    static constexpr int kWindow = 100;
    // A rank counts as slow from this ratio of its median work to the others' median on.
    static constexpr double kSlowRatio = 1.25;

    int rank = -1; // the straggler, -1: none
    QString host;
    double ratio = 0.0;  // its median work / the other ranks' median work
    double workMs = 0.0; // its median work per step
    double othersWorkMs = 0.0;
    int window = 0; // steps the medians cover (the shortest rank's window)
    bool commWaitKnown = false;
    QList<int> waitingRanks; // ranks with a high communication wait
    double waitingMs = 0.0;  // their median communication wait
    double stragglerWaitMs = 0.0;
    int ranksCompared = 0;

    bool found() const { return rank >= 0; }
    // One sentence (two with waiting ranks); empty when there is nothing to compare (fewer
    // than two ranks with step times).
    QString text() const;

    // hosts: rank → host, for the text.
    static StragglerReport analyze(const MetricsStore &store,
                                   const QHash<int, QString> &hosts = {});
};

} // namespace rankdeck
