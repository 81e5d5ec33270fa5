// SPDX-License-Identifier: GPL-3.0-or-later
#include "loglinedelegate.h"

#include "models/logmodel.h"

#include <QDateTime>

namespace rankdeck {

QString LogLineDelegate::disclosure(bool expanded)
{
    return expanded ? QStringLiteral("\u25be ") : QStringLiteral("\u25b8 ");
}

void LogLineDelegate::initStyleOption(QStyleOptionViewItem *option, const QModelIndex &index) const
{
    QStyledItemDelegate::initStyleOption(option, index);
    if (index.data(LogModel::IsMarkerRole).toBool()) {
        option->font.setItalic(true);
        option->palette.setColor(QPalette::Text, option->palette.color(QPalette::PlaceholderText));
        option->displayAlignment = Qt::AlignHCenter | Qt::AlignVCenter;
        return;
    }
    if (index.data(LogModel::IsLiveRole).toBool()) {
        // A progress bar being redrawn: this row changes in place until its line ends.
        option->text = QStringLiteral("\u21bb ") + option->text;
    } else if (index.data(LogModel::IsGroupRole).toBool()) {
        option->text = disclosure(index.data(LogModel::ExpandedRole).toBool()) + option->text;
    } else if (index.data(LogModel::IsGroupMemberRole).toBool()) {
        const qint64 timeUs = index.data(LogModel::TimeRole).toLongLong();
        option->text =
            QStringLiteral("    ") +
            QDateTime::fromMSecsSinceEpoch(timeUs / 1000).toString(QStringLiteral("HH:mm:ss.zzz")) +
            QStringLiteral("  ") + option->text;
    }
    if (index.data(LogModel::StreamRole).toInt() == 1) {
        const bool dark = option->palette.color(QPalette::Base).lightness() < 128;
        option->palette.setColor(QPalette::Text,
                                 dark ? QColor(0xff, 0x7b, 0x72) : QColor(0xb3, 0x1d, 0x28));
    }
}

} // namespace rankdeck
