// SPDX-License-Identifier: GPL-3.0-or-later
#include "runcolors.h"

#include <QSet>

#include <cmath>

namespace rankdeck {

QColor RunColors::color(int slot)
{
    static const QColor palette10[PaletteSize] = {
        QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
        QColor(0xd6, 0x27, 0x28), QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
        QColor(0xe3, 0x77, 0xc2), QColor(0x7f, 0x7f, 0x7f), QColor(0xbc, 0xbd, 0x22),
        QColor(0x17, 0xbe, 0xcf)};
    if (slot >= 0 && slot < PaletteSize)
        return palette10[slot];
    return QColor::fromHsv(int(std::fmod(std::max(slot, 0) * 137.508, 360.0)), 200, 190);
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
