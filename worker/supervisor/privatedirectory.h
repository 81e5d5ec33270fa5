// SPDX-License-Identifier: GPL-3.0-or-later
//
// A directory the supervisor writes code and diagnostics into (the run directory, its python/):
// created 0700 when missing, and refused when another user could have put something in it. A
// directory in /tmp that someone else made first, or one that others may write to, would let
// them plant a json.py or a torch/ that goes first on the program's PYTHONPATH, or a link that
// turns the supervisor's writes against the user's own files.
#pragma once

#include <string>

namespace rankdeck::supervisor {

// Creates `path` (and missing parents; only the last component is made private) and checks it:
// a real directory (not a link), owned by this user, writable by nobody else. Tightens a
// directory of this user that others may only read to 0700. false with *why naming the
// directory and the problem otherwise.
bool ensurePrivateDirectory(const std::string &path, std::string *why);

} // namespace rankdeck::supervisor
