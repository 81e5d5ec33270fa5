// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/metricnames.h"

#include "store/metricsstore.h"
#include "util/translation.h"

namespace rankdeck::metric {

QString displayName(const QString &id)
{
    if (id == Loss)
        return tr("Loss");
    if (id == LearningRate)
        return tr("Learning rate");
    if (id == SamplesPerSec)
        return tr("Samples/s");
    if (id == StepTimeMs)
        return tr("Step time (ms)");
    if (id == CommWaitMs)
        return tr("Communication wait (ms)");
    if (id == ComputeMs)
        return tr("Compute time (ms)");
    if (id == GpuMemBytes)
        return tr("GPU memory (bytes)");
    return id;
}

} // namespace rankdeck::metric
