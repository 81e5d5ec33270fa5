// SPDX-License-Identifier: GPL-3.0-or-later
#include "problemlabel.h"

#include "statestyle.h"

#include <QEvent>

namespace rankdeck {

ProblemLabel::ProblemLabel(QWidget *parent) : QLabel(parent)
{
    setWordWrap(true);
    setTextInteractionFlags(Qt::TextSelectableByMouse);
    applyColour();
}

void ProblemLabel::changeEvent(QEvent *event)
{
    QLabel::changeEvent(event);
    // setPalette() sends PaletteChange again; an equal palette is not set twice, so this ends.
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange)
        applyColour();
}

void ProblemLabel::applyColour()
{
    // Only the text colour is the label's own; the rest follows the palette the user switched to.
    QPalette own = palette();
    own.setColor(QPalette::WindowText, toneColor(StateTone::Error, own));
    setPalette(own);
}

} // namespace rankdeck
