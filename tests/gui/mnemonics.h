// SPDX-License-Identifier: GPL-3.0-or-later
//
// The mnemonics (Alt+letter) a window offers at once, for the GUI tests that check no letter is
// taken twice: a clash makes Alt+letter cycle between the two controls or, between a menu and a
// button, open the menu only, and keyboard users never reach the other.
#pragma once

#include <QAbstractButton>
#include <QGroupBox>
#include <QKeySequence>
#include <QLabel>
#include <QMap>
#include <QMenuBar>
#include <QStringList>
#include <QTabBar>
#include <QWidget>

namespace rankdeck::testing {

// Every letter taken twice among what is visible in window now, as "Alt+S: 'Lo&ss', '&Stop'";
// empty when none is. Hidden controls (another tab's page, another kind's form) have no active
// shortcut and do not count.
inline QStringList clashingMnemonics(QWidget *window)
{
    QMap<QString, QStringList> taken;
    auto add = [&](const QString &text) {
        const QKeySequence key = QKeySequence::mnemonic(text);
        if (!key.isEmpty())
            taken[key.toString()] << QStringLiteral("'%1'").arg(text);
    };
    const QList<QWidget *> widgets = window->findChildren<QWidget *>();
    for (QWidget *w : widgets) {
        if (!w->isVisibleTo(window))
            continue;
        if (auto *button = qobject_cast<QAbstractButton *>(w))
            add(button->text());
        else if (auto *label = qobject_cast<QLabel *>(w); label && label->buddy())
            add(label->text());
        else if (auto *box = qobject_cast<QGroupBox *>(w); box && box->isCheckable())
            add(box->title());
        else if (auto *tabs = qobject_cast<QTabBar *>(w))
            for (int i = 0; i < tabs->count(); ++i)
                add(tabs->tabText(i));
        else if (auto *bar = qobject_cast<QMenuBar *>(w))
            for (const QAction *menu : bar->actions())
                add(menu->text());
    }
    QStringList clashes;
    for (auto it = taken.cbegin(); it != taken.cend(); ++it)
        if (it.value().size() > 1)
            clashes << it.key() + QStringLiteral(": ") + it.value().join(QStringLiteral(", "));
    return clashes;
}

} // namespace rankdeck::testing
