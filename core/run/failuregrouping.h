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
#pragma once

#include "run/failurereport.h"

#include <QList>
#include <QString>

namespace rankdeck {

// Compact rank ranges: {1, 2, 3, 5, 7, 8, 9} → "1–3, 5, 7–9" (sorted, duplicates once).
QString formatRankRanges(QList<int> ranks);

// The key two failures share when they are the same (see above).
QString failureSignature(const RankFailure &failure);

} // namespace rankdeck
