// SPDX-License-Identifier: GPL-3.0-or-later
//
// Small text helpers the Overview's views share: a duration as a clock reads it, and a
// widget's tooltip that names what lies under the mouse (the heatmap's cell, a steps column).
#pragma once

#include <QString>

class QEvent;
class QWidget;

namespace rankdeck {

// "4:05" or "1:02:03": minutes and seconds, hours when there are any.
QString clockDuration(double seconds);

// For a widget's event(): a tooltip event shows text, or hides the tooltip when text is empty;
// true when the event was a tooltip (handled), false for any other event.
bool showTooltipText(QWidget *widget, QEvent *event, const QString &text);

} // namespace rankdeck
