// SPDX-License-Identifier: GPL-3.0-or-later
//
// How the one state model (core's record/shownstate.h) looks: a colour per tone, taken from the
// palette in use at the moment of painting (so a light/dark switch while running recolours
// everything), and an icon per state, from the icon theme or the style's own.
#pragma once

#include "record/shownstate.h"

#include <QColor>
#include <QIcon>

class QPalette;
class QStyle;

namespace rankdeck {

QColor toneColor(StateTone tone, const QPalette &palette);
QIcon stateIcon(ShownState state, const QStyle *style);

} // namespace rankdeck
