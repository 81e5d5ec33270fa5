// SPDX-License-Identifier: GPL-3.0-or-later
//
// A live (or followed) run's verdict facts for the one state model (record/shownstate.h): its
// hang watch, its flight recorder's shown verdict and its failure report, read off the
// controller, so that every view judges a run by the same facts.
#pragma once

#include "record/shownstate.h"

namespace rankdeck {

class RunController;

// straggler: the rank a fresher StragglerReport named (a view's); -1: the launcher's own.
RunVerdictFacts runVerdictFacts(const RunController &run, int straggler = -1);

} // namespace rankdeck
