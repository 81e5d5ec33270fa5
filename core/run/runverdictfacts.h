// SPDX-License-Identifier: GPL-3.0-or-later
//
// A live (or followed) run's verdict facts for the one state model (record/shownstate.h): its
// hang watch, its flight recorder's shown verdict and its failure report, read off the
// controller, so that every view judges a run by the same facts.
#pragma once

#include "record/shownstate.h"

namespace rankdeck {

class RunController;

// straggler: the rank a StragglerReport named (-1: none); the controller does not keep it.
RunVerdictFacts runVerdictFacts(const RunController &run, int straggler = -1);

} // namespace rankdeck
