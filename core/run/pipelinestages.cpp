// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/pipelinestages.h"

#include "config/metricpattern.h"
#include "store/logstore.h"
#include "store/metricsstore.h"
#include "util/translation.h"

namespace rankdeck {

QStringList PipelineStages::open(RunData &run, RankPipeline::Listener *listener)
{
    QStringList problems;
    run.logs = std::make_unique<LogStore>();
    QString storeError;
    if (!run.logs->open(run.record.directory(), &storeError))
        problems << tr("cannot write logs to the run record: %1").arg(storeError);
    run.metrics = std::make_unique<MetricsStore>();
    run.metrics->setHistoryBudget(MetricsStore::kRunHistory);
    if (!run.metrics->open(run.record.directory(), &storeError))
        problems << tr("cannot write metrics to the run record: %1").arg(storeError);
    // The built-in worker reports every metric in events; a user's program may only print them.
    m_extractor.setDefaultPatternsEnabled(run.config.isProgram());
    QList<MetricPattern> patterns;
    for (const QString &spec : std::as_const(run.config.metricPatterns)) {
        MetricPattern p;
        QString error;
        if (parseMetricPattern(spec, &p, &error))
            patterns << p;
        else
            problems << error;
    }
    m_extractor.setUserPatterns(patterns);
    RankPipeline::Stages stages;
    stages.logs = run.logs.get();
    stages.metrics = run.metrics.get();
    stages.extractor = &m_extractor;
    stages.tensorboard = &m_tensorboard;
    stages.python = &m_python;
    stages.offsetsFile = &m_offsetsFile;
    stages.program = run.config.isProgram();
    stages.listener = listener;
    run.pipelines.clear();
    for (int r = 0; r < run.ranks.size(); ++r)
        run.pipelines.push_back(std::make_unique<RankPipeline>(r, stages));
    return problems;
}

void PipelineStages::forgetPython(RunData &run)
{
    m_python.resetAll();
    for (const std::unique_ptr<RankPipeline> &pipeline : run.pipelines)
        pipeline->forgetPython();
}

} // namespace rankdeck
