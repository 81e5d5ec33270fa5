// SPDX-License-Identifier: GPL-3.0-or-later
//
// One rank's output on its way from the transport to what the run decides, in the order
// docs/architecture.md draws it:
//   RankStream (line splitter → event parser) → the run record (LogStore, MetricsStore: disk
//   first) → the rank's stream offsets (never ahead of the disk) → LogMetricExtractor and
//   TensorBoardScalars (a user's program's curves) → PythonFailureScanner (its tracebacks and
//   faulthandler dumps) → the Listener (events, activity, a loss, a failure's late Python side).
// The run owns one per rank for the whole run; a new attempt gets a fresh stream (restart()).
// The stages that keep state across ranks are shared through Stages: the extractor (its
// patterns), TensorBoardScalars (its bounds are the run's, not a rank's) and the scanner.
// Nothing here reaches into the controller: what the run must react to goes up the Listener.
#pragma once

#include "record/streamoffsets.h"
#include "stream/rankstream.h"
#include "stream/tensorboardscalars.h"
#include "stream/workerevent.h"
#include "util/streamkind.h"

#include <QByteArray>
#include <QList>
#include <QString>

#include <memory>

namespace rankdeck {

class LogMetricExtractor;
class LogStore;
class MetricsStore;
class PythonFailureScanner;
class StreamOffsetsFile;
struct RankFailure;

class RankPipeline
{
public:
    // What the run reacts to, called in the order the output carries it.
    class Listener
    {
    public:
        virtual ~Listener() = default;
        // The record took a piece of output (a disk that filled up shows here first).
        virtual void pipelineRecorded() = 0;
        // The rank's offsets moved past a chunk the record has (state.json carries them).
        virtual void pipelineOffsetsMoved(int rank) = 0;
        // The last loss a user's program printed, at its printed epoch or step.
        virtual void pipelinePrintedLoss(int rank, double value, qint64 step) = 0;
        // The last loss of its TensorBoard event files.
        virtual void pipelineLoggedLoss(int rank, double value) = 0;
        // A user's program printed or logged something: its progress.
        virtual void pipelineActivity(int rank) = 0;
        // The rank's traceback or faulthandler dump changed (withPython() has more now).
        virtual void pipelinePythonChanged(int rank) = 0;
        // Lines after the record has them.
        virtual void pipelineLines(const QList<LogLine> &lines) = 0;
        // An event, before this pipeline's own stages see it (a Step's metrics, a TfEvents'
        // bytes); pipelineEventDone() after them.
        virtual void pipelineEvent(int rank, const WorkerEvent &event) = 0;
        virtual void pipelineEventDone(const WorkerEvent &event) = 0;
        // A problem worth the launcher log (a TensorBoard file over its bounds).
        virtual void pipelineMessage(const QString &message) = 0;
    };

    struct Stages
    {
        LogStore *logs = nullptr;
        MetricsStore *metrics = nullptr;
        LogMetricExtractor *extractor = nullptr;
        TensorBoardScalars *tensorboard = nullptr;
        PythonFailureScanner *python = nullptr;
        StreamOffsetsFile *offsetsFile = nullptr; // written only while open
        bool program = false;                     // a user's program, not the worker
        Listener *listener = nullptr;
    };

    RankPipeline(int rank, const Stages &stages);
    ~RankPipeline();

    int rank() const { return m_rank; }

    // A chunk of the rank's stdout or stderr, through every stage.
    void feed(StreamKind stream, const QByteArray &chunk);
    // The rank ended: what its streams and TensorBoard files still held.
    void finish();
    // A new attempt: a fresh stream (the offsets restart with the rank, restartOffsets()).
    void restart();
    // What it printed before no longer counts (the scanner itself is reset by the run).
    void forgetPython();

    const StreamOffsets &offsets() const { return m_offsets; }
    void setOffsets(const StreamOffsets &offsets) { m_offsets = offsets; }
    void restartOffsets() { m_offsets.restart(); }

    // The failure with the rank's Python side: torchelastic's error file's traceback
    // (pythonText) wins over what the rank printed, and stays once given.
    RankFailure withPython(RankFailure failure, const QString &pythonText = {});

private:
    // The lines and events onto disk (before anything else sees them), then the rest.
    void record(const RankStream::Output &out);
    void handle(RankStream::Output &out);
    void handleEvent(const WorkerEvent &event);
    void takeTensorBoard(const TensorBoardScalars::Output &out);

    const int m_rank;
    Stages m_stages;
    std::unique_ptr<RankStream> m_stream;
    StreamOffsets m_offsets;
    quint64 m_pythonGeneration = 0; // what pipelinePythonChanged() last said
    bool m_exactPython = false;     // the chain came from the error file
};

} // namespace rankdeck
