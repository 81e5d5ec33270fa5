// SPDX-License-Identifier: GPL-3.0-or-later
//
// Turns core's FailureReport (and stack dumps) into what the Failures page shows: titles, an
// HTML summary, the stacks as frames (the worker's own frames marked), plain text for the
// clipboard. Only presentation: which rank is the root cause and how frames split up is core's
// word.
#pragma once

#include "failurespage.h"

#include <QHash>
#include <QList>

namespace rankdeck {

class CollectiveVerdict;
struct FailureReport;
struct RankFailure;

QList<FailureEntry> failureEntries(const FailureReport &report,
                                   const QHash<int, QString> &stackDumps);
FailureEntry failureEntry(const RankFailure &failure);
// The flight recorder's verdict as the page's first entry: its text, each rank's collective,
// where its dumps are kept and the command that gives them to torch's analyser.
FailureEntry collectiveVerdictEntry(const CollectiveVerdict &verdict, qint64 collection,
                                    const QString &trigger, const QString &torchFolder);
// The banner for it: "Why the ranks are stuck: <the verdict's text>".
QString collectiveVerdictBanner(const CollectiveVerdict &verdict);
// The banner line for a failed run, e.g. "Root cause: rank 1 on host (local rank 1): SIGSEGV in
// f()".
QString rootCauseBanner(const FailureReport &report);

} // namespace rankdeck
