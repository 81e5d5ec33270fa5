// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/rankpipeline.h"

#include "diagnosis/failurereport.h"
#include "diagnosis/pythonfailure.h"
#include "record/streamoffsetsfile.h"
#include "store/logstore.h"
#include "store/metricsstore.h"
#include "stream/logmetricextractor.h"
#include "stream/pythonfailurescanner.h"
#include "stream/pythontraceback.h"
#include "util/clock.h"

#include <QJsonObject>

namespace rankdeck {

RankPipeline::RankPipeline(int rank, const Stages &stages)
    : m_rank(rank), m_stages(stages), m_stream(std::make_unique<RankStream>(rank))
{}

RankPipeline::~RankPipeline() = default;

void RankPipeline::restart()
{
    m_stream = std::make_unique<RankStream>(m_rank);
}

void RankPipeline::forgetPython()
{
    m_pythonGeneration = 0;
    m_exactPython = false;
}

void RankPipeline::feed(StreamKind stream, const QByteArray &chunk)
{
    RankStream::Output out;
    m_stream->feed(stream, chunk, out);
    record(out);
    // After the record has the lines: the offsets never run ahead of what is on disk. Before
    // anyone sees them: a launcher killed right after printing a line has its offset kept.
    m_offsets.add(stream, chunk);
    // state.json carries them; the run writes it at most every 0.5 s. Where ranks outlive a
    // launcher that dies (a Slurm job, SSH ranks within their grace), streams.bin has them
    // right away: a new launcher then resumes at the next byte even after a SIGKILL.
    if (m_stages.offsetsFile && m_stages.offsetsFile->isOpen())
        m_stages.offsetsFile->write(m_rank, m_offsets);
    m_stages.listener->pipelineOffsetsMoved(m_rank);
    handle(out);
}

void RankPipeline::finish()
{
    RankStream::Output out;
    m_stream->finish(out);
    record(out);
    handle(out);
    m_offsets.flush();
    TensorBoardScalars::Output tb;
    m_stages.tensorboard->finish(m_rank, tb);
    takeTensorBoard(tb);
}

void RankPipeline::record(const RankStream::Output &out)
{
    // The run record first: a view or a console never sees a line the disk has not got.
    if (!out.lines.isEmpty()) {
        m_stages.logs->append(out.lines);
    }
    if (!out.events.isEmpty()) {
        // Flight-recorder chunks are kept whole in flight-recorder/<id>/, not event by event;
        // profiles in profiles/<id>/. Sample windows come every 2 s from every rank for as long
        // as the run goes: their verdict is what the record keeps (state.json).
        QList<WorkerEvent> events = out.events;
        events.removeIf([](const WorkerEvent &e) {
            return e.type() == WorkerEvent::Type::FlightRecorder ||
                   e.type() == WorkerEvent::Type::Samples || e.type() == WorkerEvent::Type::Profile;
        });
        m_stages.logs->appendEvents(m_rank, events);
        m_stages.metrics->appendEvents(events);
    }
    m_stages.listener->pipelineRecorded();
}

void RankPipeline::handle(RankStream::Output &out)
{
    Listener *listener = m_stages.listener;
    LogMetricExtractor &extractor = *m_stages.extractor;
    if (extractor.isActive()) {
        // Curves with no code change: scalars printed in the user program's own lines, and in
        // the redraws of its progress bars.
        const QList<LogMetricExtractor::Point> points = extractor.extract(m_rank, out);
        m_stages.metrics->beginBatch();
        for (const LogMetricExtractor::Point &p : points)
            m_stages.metrics->append(m_rank, p.name, p.step, p.timeUs, p.value, p.basis);
        m_stages.metrics->endBatch();
        // The rank table and the summaries show the last loss the program printed and its
        // epoch or step, apart from `step` (events' steps are what the watchdog knows).
        for (const LogMetricExtractor::Point &p : points)
            if (p.name == metric::Loss)
                listener->pipelinePrintedLoss(m_rank, p.value, p.step);
    }
    if (!out.live.isEmpty())
        m_stages.logs->setLive(out.live); // the row a progress bar redraws, for the views
    // A progress bar redrawing its line is output too, newline or not (a whole epoch may pass
    // before it prints one).
    const bool printed = !out.lines.isEmpty() || !out.redraws.isEmpty() || !out.live.isEmpty();
    if (m_stages.program && printed) {
        listener->pipelineActivity(m_rank);
        // Tracebacks and faulthandler dumps in what the program printed.
        for (const LogLine &line : std::as_const(out.lines))
            if (!line.partial)
                m_stages.python->addLine(m_rank, line.text);
        // A traceback or faulthandler dump completed after the rank's failure was recorded
        // (its stderr and the supervisor's event travel apart): the rank's entry gets it now.
        const quint64 generation = m_stages.python->generation(m_rank);
        if (generation != m_pythonGeneration) {
            m_pythonGeneration = generation;
            listener->pipelinePythonChanged(m_rank);
        }
    }
    if (!out.lines.isEmpty())
        listener->pipelineLines(out.lines);
    for (const WorkerEvent &e : out.events)
        handleEvent(e);
}

void RankPipeline::handleEvent(const WorkerEvent &e)
{
    m_stages.listener->pipelineEvent(m_rank, e);
    switch (e.type()) {
    case WorkerEvent::Type::Step:
        // The metrics the rank reports itself (rankdeck.log, or the worker) must not get a
        // second curve from its printed lines; the others still come from them.
        if (m_stages.extractor->isActive()) {
            const QJsonObject &fields = e.fields();
            for (auto it = fields.constBegin(); it != fields.constEnd(); ++it)
                m_stages.extractor->reportedInEvents(m_rank, it.key());
            const QJsonObject scalars = fields.value(QStringLiteral("scalars")).toObject();
            for (auto it = scalars.constBegin(); it != scalars.constEnd(); ++it)
                m_stages.extractor->reportedInEvents(m_rank, it.key());
        }
        break;
    case WorkerEvent::Type::TfEvents: {
        TensorBoardScalars::Output out;
        m_stages.tensorboard->feed(m_rank, e, out);
        takeTensorBoard(out);
        break;
    }
    default:
        break;
    }
    m_stages.listener->pipelineEventDone(e);
}

void RankPipeline::takeTensorBoard(const TensorBoardScalars::Output &out)
{
    for (const QString &problem : out.problems)
        m_stages.listener->pipelineMessage(problem);
    if (out.points.isEmpty())
        return;
    for (const TensorBoardScalars::Point &p : out.points) {
        // The wall time the program gave the point; the launcher's clock if it gave none.
        // Named apart from the printed lines' curves (TensorBoardScalars: "tb/" + tag): the two
        // sources never share a series.
        m_stages.metrics->append(m_rank, p.name, p.step, p.wallTimeUs > 0 ? p.wallTimeUs : nowUs(),
                                 p.value);
        if (p.tag == metric::Loss)
            m_stages.listener->pipelineLoggedLoss(m_rank, p.value);
    }
    // A program that writes its scalars makes progress (the hang watch judges by that).
    if (m_stages.program)
        m_stages.listener->pipelineActivity(m_rank);
}

RankFailure RankPipeline::withPython(RankFailure failure, const QString &pythonText)
{
    if (!m_stages.program)
        return failure;
    QList<PythonException> chain;
    if (!pythonText.isEmpty())
        chain = parsePythonTraceback(pythonText);
    if (!chain.isEmpty())
        m_exactPython = true;
    else if (!m_exactPython)
        // What the rank printed, unless the error file said it exactly: that one stays.
        chain = m_stages.python->lastException(m_rank);
    mergePython(&failure, chain, m_stages.python->lastFaultDump(m_rank),
                m_stages.python->lastChildDeath(m_rank), m_stages.python->lastTerminate(m_rank));
    return failure;
}

} // namespace rankdeck
