// SPDX-License-Identifier: GPL-3.0-or-later
//
// One colour per compared run that stays the run's own: a run keeps the palette slot it had the
// last time it was compared, unless another run of the same selection holds it, and a run seen
// for the first time takes a slot no other run has had yet (while the qualitative palette lasts).
// So adding a third run to a comparison, or selecting the same runs again later, repaints none of
// the runs already on screen. Keys are whatever names a run for good (its id or record directory).
#pragma once

#include <QColor>
#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

namespace rankdeck {

class RunColors
{
public:
    // Tableau 10 for the first ten slots (far apart for a handful of runs), golden-angle hues
    // beyond.
    static QColor color(int slot);
    static constexpr int PaletteSize = 10;

    // A distinct slot for each key, in the keys' order; remembered for the next call.
    QList<int> assign(const QStringList &keys);
    // The slot a key had last, or -1.
    int slotOf(const QString &key) const { return m_slots.value(key, -1); }

private:
    QHash<QString, int> m_slots;
};

} // namespace rankdeck
