// SPDX-License-Identifier: GPL-3.0-or-later
//
// What a run does with its ranks' output once each rank's RankPipeline has carried it through
// its stages: it is their Listener. Every event first updates its rank (RankEventTracker: state,
// step, signs of life), then goes to the handler its type has in a table, not a switch: Hello
// (torchrun's OMP_NUM_THREADS notice), Store (rank 0's port: RankStarter starts the others),
// Error and Crash (the rank's own failure), FlightRecorder (its dump's chunks), Stacks (its stack
// dump, kept). What a user's program prints is its progress; a loss it printed or logged shows in
// the rank table. Decisions beyond that are the run's (RunActions) and RunFailures'.
#pragma once

#include "run/rankpipeline.h"
#include "run/rankstarter.h"
#include "run/rundata.h"
#include "stream/logline.h"
#include "stream/workerevent.h"

#include <QHash>
#include <QList>
#include <QString>

namespace rankdeck {

class FlightRecorderCollector;
class RunActions;
class RunFailures;
class RunStateWriter;

class RankEventHandlers : public RankPipeline::Listener
{
public:
    // detach: the ranks may outlive the launcher, so their offsets make state.json dirty.
    RankEventHandlers(RunData &run, RunActions &actions, RunFailures &failures,
                      RunStateWriter &writer, FlightRecorderCollector &collector, bool detach);

    // RankPipeline::Listener: what a rank's output asks of the run.
    void pipelineRecorded() override;
    void pipelineOffsetsMoved(int rank) override;
    void pipelinePrintedLoss(int rank, double value, qint64 step) override;
    void pipelineLoggedLoss(int rank, double value) override;
    void pipelineActivity(int rank) override;
    void pipelinePythonChanged(int rank) override;
    void pipelineLines(const QList<LogLine> &lines) override;
    void pipelineEvent(int rank, const WorkerEvent &event) override;
    void pipelineEventDone(const WorkerEvent &event) override;
    void pipelineMessage(const QString &message) override;

private:
    // What the run does with an event, by its type (the tracker has read it first).
    using EventHandler = void (RankEventHandlers::*)(int rank, const WorkerEvent &event);
    static const QHash<int, EventHandler> &eventHandlers();
    void onHello(int rank, const WorkerEvent &event);
    void onStore(int rank, const WorkerEvent &event);
    void onFailureEvent(int rank, const WorkerEvent &event);
    void onFlightRecorder(int rank, const WorkerEvent &event);
    void onStacks(int rank, const WorkerEvent &event);
    void onSamples(int rank, const WorkerEvent &event);
    void onProfile(int rank, const WorkerEvent &event);

    RunData &m_run;
    RunActions &m_actions;
    RunFailures &m_failures;
    RunStateWriter &m_writer;
    FlightRecorderCollector &m_collector;
    bool m_detach = false;
    bool m_ompNoticeGiven = false; // the OMP_NUM_THREADS=1 notice, once per run
    RankStarter m_starter;         // the ranks after rank 0, in slices of the event loop
};

} // namespace rankdeck
