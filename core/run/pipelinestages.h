// SPDX-License-Identifier: GPL-3.0-or-later
//
// What a run's RankPipelines share: the run record's stores they write first, the extractor of
// a user's program's printed metrics (its patterns: the built-in ones for a program, the
// profile's and the launch's), TensorBoardScalars (its bounds are the run's), the Python
// failure scanner and streams.bin (every rank's offsets, where ranks may outlive the launcher).
// open() makes one pipeline per rank of the run, each reporting to the same listener.
#pragma once

#include "record/streamoffsetsfile.h"
#include "run/rankpipeline.h"
#include "run/rundata.h"
#include "stream/logmetricextractor.h"
#include "stream/pythonfailurescanner.h"
#include "stream/tensorboardscalars.h"

#include <QString>
#include <QStringList>

namespace rankdeck {

class PipelineStages
{
public:
    // Opens the stores in run.record's directory, sets the extractor's patterns from run.config
    // and gives every rank of run.ranks its pipeline; returns the problems met, each a line for
    // the launcher log (a store that cannot be written, a pattern that does not parse).
    QStringList open(RunData &run, RankPipeline::Listener *listener);
    // streams.bin in the run directory (transports with Capability::Reattach).
    void openOffsetsFile(const QString &runDirectory) { m_offsetsFile.open(runDirectory); }
    // A new attempt: what the ranks printed before no longer counts.
    void forgetPython(RunData &run);

private:
    LogMetricExtractor m_extractor;   // curves from the lines of a user's program
    TensorBoardScalars m_tensorboard; // curves from its TensorBoard event files
    PythonFailureScanner m_python;    // tracebacks and faulthandler dumps in those lines
    StreamOffsetsFile m_offsetsFile;  // the offsets, right after each chunk
};

} // namespace rankdeck
