// SPDX-License-Identifier: GPL-3.0-or-later
//
// What people call the metrics the store fills from step events ("Communication wait (ms)" for
// comm_wait_ms). In core so that the Loss page's metric list and the compare table, in the GUI
// and in the CLI, use the same words for the same curve.
#pragma once

#include <QString>

namespace rankdeck::metric {

// The name to show for a metric id; a metric without one (a program's own, such as "acc") is
// shown as its id, which is what its program printed.
QString displayName(const QString &id);

} // namespace rankdeck::metric
