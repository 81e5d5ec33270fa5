// SPDX-License-Identifier: GPL-3.0-or-later
#include "appicon.h"

#include <QPainter>
#include <QPainterPath>
#include <QPixmap>

namespace rankdeck {

namespace {
QPixmap paintIcon(int size)
{
    QPixmap pixmap(size, size);
    pixmap.fill(Qt::transparent);
    QPainter p(&pixmap);
    p.setRenderHint(QPainter::Antialiasing);
    p.scale(size / 64.0, size / 64.0);
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(0x1f, 0x3a, 0x5f));
    p.drawRoundedRect(QRectF(2, 2, 60, 60), 12, 12);
    // Four rank bars, like the deck of ranks the app watches.
    const QColor bars[] = {QColor(0x4f, 0xc3, 0xf7), QColor(0x81, 0xc7, 0x84),
                           QColor(0xff, 0xb7, 0x4d), QColor(0xe5, 0x73, 0x73)};
    for (int i = 0; i < 4; ++i) {
        p.setBrush(bars[i]);
        p.drawRoundedRect(QRectF(10, 12 + i * 10, 44 - i * 6, 6), 3, 3);
    }
    // A falling loss curve across them.
    QPainterPath curve;
    curve.moveTo(10, 14);
    curve.cubicTo(20, 44, 34, 50, 54, 52);
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(Qt::white, 3.5, Qt::SolidLine, Qt::RoundCap));
    p.drawPath(curve);
    return pixmap;
}
} // namespace

QIcon appIcon()
{
    QIcon icon;
    for (int size : {16, 24, 32, 48, 64, 128, 256})
        icon.addPixmap(paintIcon(size));
    return icon;
}

} // namespace rankdeck
