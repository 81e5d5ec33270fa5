// SPDX-License-Identifier: GPL-3.0-or-later
//
// rankdeck-cli plot: a run's curves (or several runs', --compare) as a PNG or PDF without a
// display, drawn by the same LossPlot as the app's Loss page (plot/), offscreen.
#pragma once

#include <QStringList>

namespace rankdeck::cli {

class PlotCommand
{
public:
    static int run(const QStringList &args);
};

} // namespace rankdeck::cli
