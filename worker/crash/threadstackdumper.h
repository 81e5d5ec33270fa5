// SPDX-License-Identifier: GPL-3.0-or-later
//
// Stacks of every thread on request (the control channel's dump-stacks, SIGUSR1), while the
// process keeps running. A real-time signal goes to each thread in turn (tgkill); its handler
// records the thread's own PCs into a slot and returns; a helper thread waits for the answers,
// symbolizes them and emits one `stacks` event, also written to <runDir>/stacks-rank<R>.txt.
#pragma once

namespace rankdeck::crash::detail {

// Installs the capture signal's and SIGUSR1's handlers and starts the dump thread. Call once.
void startThreadStackDumper();

// Wakes the dump thread. Async-signal-safe: it copies the reason and writes one byte to a pipe.
void requestThreadStackDump(const char *reason);

} // namespace rankdeck::crash::detail
