// SPDX-License-Identifier: GPL-3.0-or-later
//
// The crash report the signal handler writes itself when the symbolizing child could not (it
// hung, crashed or was skipped with RANKDECK_CRASH_RAW=1): module+offset per frame, which can be
// symbolized later against the binary with the report's build id. Async-signal-safe: only
// syscalls and static buffers, so it works whatever lock the crashing thread held.
#pragma once

namespace rankdeck::crash::detail {

// Writes the `crash` event (stdout), the raw stack (stderr) and <runDir>/crash-rank<R>.txt
// from g_crash and g_settings. Not reentrant: the handler lets one thread report.
void writeRawCrashReport();

} // namespace rankdeck::crash::detail
