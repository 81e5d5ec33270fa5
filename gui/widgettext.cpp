// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgettext.h"

#include <QHelpEvent>
#include <QToolTip>
#include <QWidget>

#include <cmath>

namespace rankdeck {

QString clockDuration(double seconds)
{
    const qint64 s = std::llround(seconds);
    if (s >= 3600)
        return QStringLiteral("%1:%2:%3")
            .arg(s / 3600)
            .arg(s / 60 % 60, 2, 10, QLatin1Char('0'))
            .arg(s % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

bool showTooltipText(QWidget *widget, QEvent *event, const QString &text)
{
    if (event->type() != QEvent::ToolTip)
        return false;
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(static_cast<QHelpEvent *>(event)->globalPos(), text, widget);
    return true;
}

} // namespace rankdeck
