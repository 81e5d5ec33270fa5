// SPDX-License-Identifier: GPL-3.0-or-later
//
// A run's watch, every 0.5 s while it goes on: a stop or a stack dump asked for through the
// run directory (`rankdeck-cli stop`, `stacks` from another shell), a rank 0 that does not
// report its rendezvous port in time, silent and hung ranks (HangWatchdog: stacks asked for by
// signal or command, the flight recorders collected), and state.json when something changed
// (less often for large runs: see kStateRanksPerHalfSecond).
// What it finds, the run decides on (RunActions).
#pragma once

#include "run/rundata.h"

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

namespace rankdeck {

class FlightRecorderCollector;
class RunActions;

class RunWatch : public QObject
{
    Q_OBJECT
public:
    struct Settings
    {
        int hangTimeoutSec = 0;  // no step progress; 0: the profile's heartbeat timeout
        int storeTimeoutSec = 0; // rank 0's port; 0: the profile's rendezvous timeout
        bool autoDumpStacks = true;
    };

    RunWatch(RunData &run, RunActions &actions, FlightRecorderCollector &collector,
             const Settings &settings, QObject *parent = nullptr);

    void start();
    void stop();

private:
    void tick();
    void checkRendezvous(qint64 now);
    // The straggler report the Overview shows, made by the launcher too, every 2 s while points
    // come: kept in state.json so that the run list, `runs` and a second window read
    // "straggling".
    void checkStraggler();
    // Why the straggler is slow, from the supervised ranks' sampled stacks (SlowRankVerdict
    // over the last kSlowWindowUs), each time a sample window came.
    void checkSlowRank();
    static constexpr qint64 kSlowWindowUs = 10'000'000;

    RunData &m_run;
    RunActions &m_actions;
    FlightRecorderCollector &m_collector;
    Settings m_settings;
    QTimer m_timer;
    bool m_killTaken = false;        // kill-request acted on (it stays until the run ends)
    QElapsedTimer m_sinceStateWrite; // invalid until the watch first writes state.json
    QElapsedTimer m_sinceStraggler;  // invalid until the first straggler report
    quint64 m_stragglerGeneration = ~quint64(0);
    quint64 m_samplesGeneration = 0;
    int m_pendingSlowRank = -1; // the last judgement's, shown once the next agrees
    SlowRankVerdict::Cause m_pendingSlowCause = SlowRankVerdict::Cause::None;
};

} // namespace rankdeck
