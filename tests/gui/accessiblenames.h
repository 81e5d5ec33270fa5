// SPDX-License-Identifier: GPL-3.0-or-later
//
// What a screen reader would call each control of a window, for the GUI tests that check that
// none is nameless: Qt's accessibility layer (the same interfaces the AT-SPI bridge exports)
// names a button by its text, a field by its buddy label or accessibleName, a view by its
// accessibleName. A control with no name is read as "edit", "combo box", "list": useless.
#pragma once

#include <QAbstractButton>
#include <QAbstractItemView>
#include <QAbstractSpinBox>
#include <QAccessible>
#include <QComboBox>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSlider>
#include <QStringList>
#include <QTabBar>
#include <QTextEdit>
#include <QWidget>

namespace rankdeck::testing {

// The controls visible in window now that a screen reader would read without a name, each as
// "ClassName objectName"; empty when every one has a name.
inline QStringList namelessControls(QWidget *window)
{
    QStringList nameless;
    const QList<QWidget *> widgets = window->findChildren<QWidget *>();
    for (QWidget *w : widgets) {
        if (!w->isVisibleTo(window))
            continue;
        const bool control = qobject_cast<QAbstractButton *>(w) || qobject_cast<QLineEdit *>(w) ||
                             qobject_cast<QComboBox *>(w) || qobject_cast<QAbstractItemView *>(w) ||
                             qobject_cast<QAbstractSpinBox *>(w) || qobject_cast<QSlider *>(w) ||
                             qobject_cast<QTextEdit *>(w) || qobject_cast<QPlainTextEdit *>(w);
        // A combo box's own line edit and list, a spin box's edit, a view's header: read as part
        // of their owner.
        if (!control || qobject_cast<QComboBox *>(w->parentWidget()) ||
            qobject_cast<QAbstractSpinBox *>(w->parentWidget()) ||
            w->inherits("QComboBoxListView") || qobject_cast<QTabBar *>(w->parentWidget()) ||
            qobject_cast<QAbstractItemView *>(w->parentWidget()))
            continue;
        QAccessibleInterface *face = QAccessible::queryAccessibleInterface(w);
        if (!face || face->text(QAccessible::Name).trimmed().isEmpty())
            nameless << QStringLiteral("%1 %2").arg(
                QString::fromLatin1(w->metaObject()->className()), w->objectName());
    }
    return nameless;
}

} // namespace rankdeck::testing
