// SPDX-License-Identifier: GPL-3.0-or-later
#include "runcolors.h"

#include <QSet>

#include <algorithm>
#include <cmath>

namespace rankdeck {

QColor RunColors::color(int slot, bool darkBackground)
{
    // Okabe & Ito, "Color Universal Design" (2008), in their order: the first few ranks or runs
    // differ in hue and lightness both.
    static const QRgb okabeIto[PaletteSize] = {0xE69F00, 0x56B4E9, 0x009E73, 0xF0E442,
                                               0x0072B2, 0xD55E00, 0xCC79A7, 0x000000};
    if (slot >= 0 && slot < PaletteSize) {
        const QRgb rgb = okabeIto[slot];
        // Black vanishes on a dark background, the yellow (1.3:1) on a light one; the grey and
        // the olive keep the slot told apart from its neighbours at a contrast like the others'.
        if (darkBackground && rgb == 0x000000)
            return QColor(0xBB, 0xBB, 0xBB);
        if (!darkBackground && rgb == 0xF0E442)
            return QColor(0xA8, 0x9A, 0x00);
        return QColor(QRgb(0xFF000000 | rgb));
    }
    // Golden-angle hues keep neighbouring slots apart however many there are; counted from the
    // palette's end, the first ones (red, green, purple) are hues the palette lacks.
    const int step = std::max(slot, PaletteSize) - PaletteSize;
    const int hue = int(std::fmod(step * 137.508, 360.0));
    return QColor::fromHsv(hue, 200, darkBackground ? 240 : 175);
}

QList<int> RunColors::assign(const QStringList &keys)
{
    QList<int> chosen(keys.size(), -1);
    QSet<int> taken;
    // Runs seen before keep their slot first (the earlier one in the list wins a tie).
    for (qsizetype i = 0; i < keys.size(); ++i) {
        const int slot = m_slots.value(keys[i], -1);
        if (slot >= 0 && !taken.contains(slot)) {
            chosen[i] = slot;
            taken.insert(slot);
        }
    }
    QSet<int> remembered;
    for (int slot : std::as_const(m_slots))
        remembered.insert(slot);
    for (qsizetype i = 0; i < keys.size(); ++i) {
        if (chosen[i] >= 0)
            continue;
        // A palette slot no run has had keeps those runs' colours theirs when they come back;
        // once the palette is used up, the first slot free in this selection.
        int slot = -1;
        for (int s = 0; s < PaletteSize && slot < 0; ++s) {
            if (!taken.contains(s) && !remembered.contains(s))
                slot = s;
        }
        for (int s = 0; slot < 0; ++s) {
            if (!taken.contains(s))
                slot = s;
        }
        chosen[i] = slot;
        taken.insert(slot);
    }
    for (qsizetype i = 0; i < keys.size(); ++i)
        m_slots.insert(keys[i], chosen[i]);
    return chosen;
}

} // namespace rankdeck
