// SPDX-License-Identifier: GPL-3.0-or-later
//
// The open-file limit a launcher of many local ranks needs. Each local rank costs the launcher
// a few descriptors (its stdin, stdout and stderr pipes and the process descriptor QProcess
// waits on), so 512 ranks need about 2,000 where many systems set a soft limit of 1,024; the
// hard limit is usually far higher and a process may raise its own soft limit up to it.
#pragma once

#include <QString>

namespace rankdeck {

// Descriptors the launcher holds for one local rank while it runs (measured with 64 ranks:
// 3 pipes, 1 pidfd, 3 files of the record).
inline constexpr int kFilesPerLocalRank = 7;
// Descriptors the launcher needs besides its ranks (sockets, the record's files, the GUI's).
inline constexpr int kLauncherBaseFiles = 256;

// Makes sure this process may open `needed` files: raises the soft RLIMIT_NOFILE towards the
// hard one if it is lower than `needed` (to at least 65,536 like LogStore, not beyond what is
// needed above that: children inherit it, and some programs close every descriptor up to it). False
// with a message for the user when even the hard limit is too low. `raisedFrom` (may be null) gets
// the old soft limit when it was raised, else 0.
bool ensureOpenFileLimit(qint64 needed, QString *error, qint64 *raisedFrom = nullptr);

// ensureOpenFileLimit() for `ranks` local ranks and the launcher itself; logs a raise.
bool ensureOpenFilesForLocalRanks(int ranks, QString *error);

} // namespace rankdeck
