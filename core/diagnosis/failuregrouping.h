// SPDX-License-Identifier: GPL-3.0-or-later
//
// When 200 ranks die of the same thing, the report shows it once: "ranks 1–199: same traceback
// as rank 1". Two failures are the same when they agree on
//   - kind, signal and exit code,
//   - exception type, message and reason with every number and hex address left out (rank
//     ids, ports, peer addresses, sizes differ between ranks that failed alike),
//   - each Python exception's type and frames (file:line), the Python frames at a fatal signal,
//     and the functions of the native stack (not their addresses);
// host, local rank and time do not count. FailureReport::groups() is defined here.
// The root cause is its own entry, printed in full; a group of other ranks that died of the
// same traceback (or, without one, the same failure) says "same traceback as rank R above"
// instead of printing it again (issue 27: every FSDP2 rank raised the same ValueError). There
// only the traceback counts: one rank may have ended by its exit code, another been stopped by
// the launcher's SIGTERM while it printed it.
#pragma once

#include "diagnosis/failurereport.h"

#include <QList>
#include <QString>

namespace rankdeck {

// Compact rank ranges: {1, 2, 3, 5, 7, 8, 9} → "1–3, 5, 7–9" (sorted, duplicates once).
QString formatRankRanges(QList<int> ranks);
// The same with its noun: "rank 3", "ranks 0–16, 18–95".
QString formatRankList(const QList<int> &ranks);

// The key two failures share when they are the same (see above).
QString failureSignature(const RankFailure &failure);

// Whether `other` died of what the root cause died of: the same Python traceback (each
// exception's type, message without numbers, frames), or, when neither has one, the same
// signature but for the reason (the root cause has none).
bool sameAsRootCause(const RankFailure &other, const RankFailure &root);

} // namespace rankdeck
