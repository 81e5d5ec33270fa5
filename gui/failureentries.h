// SPDX-License-Identifier: GPL-3.0-or-later
//
// Turns core's FailureReport (and stack dumps) into what the Failures page shows: titles,
// HTML details with the worker's own frames highlighted, plain text for the clipboard. Only
// presentation: which rank is the root cause and how frames split up is core's word.
#pragma once

#include "failurespage.h"

#include <QHash>
#include <QList>
#include <QPalette>

namespace rankdeck {

struct FailureReport;
struct RankFailure;

QList<FailureEntry> failureEntries(const FailureReport &report,
                                   const QHash<int, QString> &stackDumps, const QPalette &palette);
FailureEntry failureEntry(const RankFailure &failure, const QPalette &palette);
// The banner line for a failed run, e.g. "Root cause: rank 1 on host (local rank 1): SIGSEGV in
// f()".
QString rootCauseBanner(const FailureReport &report);

} // namespace rankdeck
