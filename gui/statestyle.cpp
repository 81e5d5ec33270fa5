// SPDX-License-Identifier: GPL-3.0-or-later
#include "statestyle.h"

#include <QHash>
#include <QIcon>
#include <QPalette>
#include <QStyle>

namespace rankdeck {

QColor toneColor(StateTone tone, const QPalette &palette)
{
    // The palette has no warning or error role: the hue is fixed and its lightness follows the
    // palette's base, so the text keeps its contrast on a light or a dark theme.
    const bool dark = palette.color(QPalette::Base).lightness() < 128;
    switch (tone) {
    case StateTone::Active:
        return dark ? QColor(0x7e, 0xe7, 0x87) : QColor(0x1a, 0x7f, 0x37);
    case StateTone::Done:
        return dark ? QColor(0x79, 0xc0, 0xff) : QColor(0x09, 0x69, 0xda);
    case StateTone::Warning:
        return dark ? QColor(0xe3, 0xb3, 0x41) : QColor(0x9a, 0x67, 0x00);
    case StateTone::Error:
        return dark ? QColor(0xff, 0x7b, 0x72) : QColor(0xcf, 0x22, 0x2e);
    case StateTone::Muted:
        return palette.color(QPalette::PlaceholderText);
    case StateTone::Neutral:
        break;
    }
    return palette.color(QPalette::Text);
}

namespace {

QIcon makeStateIcon(ShownState state, const QStyle *style)
{
    QIcon themed = QIcon::fromTheme(shownStateIconName(state));
    if (!themed.isNull() || !style)
        return themed;
    switch (state) {
    case ShownState::Running:
        return style->standardIcon(QStyle::SP_MediaPlay);
    case ShownState::Straggling:
    case ShownState::Stuck:
    case ShownState::Desynced:
        return style->standardIcon(QStyle::SP_MessageBoxWarning);
    case ShownState::Failed:
        return style->standardIcon(QStyle::SP_MessageBoxCritical);
    case ShownState::Finished:
        return style->standardIcon(QStyle::SP_DialogApplyButton);
    case ShownState::Consequence:
    case ShownState::Stopping:
    case ShownState::Stopped:
    case ShownState::StoppedByUser:
        return style->standardIcon(QStyle::SP_MediaStop);
    case ShownState::Starting:
        return style->standardIcon(QStyle::SP_BrowserReload);
    case ShownState::Unknown:
        break;
    }
    return style->standardIcon(QStyle::SP_MessageBoxQuestion);
}

} // namespace

QIcon stateIcon(ShownState state, const QStyle *style)
{
    // A list of a thousand runs asks for an icon per row, and the style decodes its PNG files
    // again at every standardIcon(): that was most of the app's start on such a folder (issue
    // 44). One icon per state, style and icon theme, asked for from the GUI thread only.
    static QHash<QString, QIcon> made;
    const QString key = QStringLiteral("%1 %2 %3 %4")
                            .arg(int(state))
                            .arg(quintptr(style))
                            .arg(style ? style->name() : QString(), QIcon::themeName());
    if (const auto it = made.constFind(key); it != made.cend())
        return *it;
    QIcon icon = makeStateIcon(state, style);
    made.insert(key, icon);
    return icon;
}

} // namespace rankdeck
