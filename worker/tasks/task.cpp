// SPDX-License-Identifier: GPL-3.0-or-later
#include "tasks/task.h"

#include "tasks/charlmtask.h"
#include "tasks/lineartask.h"
#include "tasks/mlptask.h"
#include "tasks/scripttask.h"
#include "workeroptions.h"

#include <torch/torch.h>

namespace rankdeck {

std::unique_ptr<Task> Task::create(const WorkerOptions &o)
{
    // Every rank initialises the same way; rank 0's parameters are broadcast anyway, as DDP does.
    torch::manual_seed(std::uint64_t(o.seed));
    if (o.task == "linear")
        return std::make_unique<LinearTask>(o.datasetSize, o.seed);
    if (o.task == "mlp")
        return std::make_unique<MlpTask>(o.datasetSize, o.mlpWidth, o.mlpDepth, o.seed);
    if (o.task == "charlm") {
        std::string origin;
        const std::string text = CharLmTask::loadCorpus(o.corpus, origin);
        return std::make_unique<CharLmTask>(text, o.datasetSize, o.seed);
    }
    return std::make_unique<ScriptTask>(o.modelPath, o.dataPath, o.loss);
}

} // namespace rankdeck
