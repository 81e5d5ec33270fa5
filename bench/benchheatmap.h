// SPDX-License-Identifier: GPL-3.0-or-later
//
// bench_gui's heatmap phase (benchheatmap.cpp): prints one JSON object of its timings.
#pragma once

int phaseHeatmap(int reps);
