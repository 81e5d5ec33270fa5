// SPDX-License-Identifier: GPL-3.0-or-later
//
// The colours of curves: one per rank of a run, and one per compared run that stays the run's
// own. The first slots are the Okabe–Ito palette, told apart with every common colour-vision
// deficiency, adjusted to the background (black turns light grey on a dark one, yellow darkens
// on a light one); slots beyond step the hue by the golden angle.
// A run keeps the palette slot it had the last time it was compared, unless another run of the
// same selection holds it, and a run seen for the first time takes a slot no other run has had
// yet (while the qualitative palette lasts). So adding a third run to a comparison, or selecting
// the same runs again later, repaints none of the runs already on screen. Keys are whatever
// names a run for good (its id or record directory).
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
    // The colour of a slot (a rank, or what assign() gave a run) drawn over a dark or a light
    // background: the same hue either way, so a rank keeps its colour when the theme changes.
    static QColor color(int slot, bool darkBackground = false);
    static constexpr int PaletteSize = 8;
    // Whether curves over `background` take the dark-background variants.
    static bool isDark(const QColor &background) { return background.lightness() < 128; }

    // A distinct slot for each key, in the keys' order; remembered for the next call.
    QList<int> assign(const QStringList &keys);
    // The slot a key had last, or -1.
    int slotOf(const QString &key) const { return m_slots.value(key, -1); }

private:
    QHash<QString, int> m_slots;
};

} // namespace rankdeck
