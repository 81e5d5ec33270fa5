// SPDX-License-Identifier: GPL-3.0-or-later
//
// Which recorded runs may go, and what they hold on disk: `rankdeck-cli runs prune`, the run
// list's Delete and RunManager::remove() share one rule, so that no front end deletes a run that
// may still be going (here, in another process, or detached on its nodes).
#pragma once

#include "record/runrecord.h"

#include <QList>
#include <QString>

namespace rankdeck::RunPrune {

// A run that may still go on: not ended, and its launcher alive, or its ranks able to outlive it
// (detached). A launcher that is gone leaves local and attached ranks without their stdin or
// their link, and they end.
bool mayStillRun(const RunInfo &run);

// Bytes a run's folder takes on disk (its files' blocks, not what links point to).
qint64 diskBytes(const QString &directory);

struct Choice
{
    RunInfo run;
    QString reason; // why it goes ("older than 7 days", "beyond the newest 20"), or why it stays
    bool remove = false;
};

// runs newest first (RunRecord::list's order). A run goes when it is older than olderThanUs
// (> 0) or beyond the newest keep (>= 0) runs, whichever is asked (both: either); never one
// that mayStillRun(). Every run is listed, with its reason.
QList<Choice> choose(const QList<RunInfo> &runs, qint64 nowUs, qint64 olderThanUs, int keep);

// "7d", "12h", "30m", "90s" or a plain number of days, in µs; false when it is none of those.
bool parseAge(const QString &text, qint64 *us);

} // namespace rankdeck::RunPrune
