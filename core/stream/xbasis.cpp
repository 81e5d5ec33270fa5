// SPDX-License-Identifier: GPL-3.0-or-later
#include "stream/xbasis.h"

#include <QCoreApplication>

#include <algorithm>
#include <array>

namespace rankdeck {

QString xBasisKey(XBasis basis)
{
    switch (basis) {
    case XBasis::Epoch:
        return QStringLiteral("epoch");
    case XBasis::Report:
        return QStringLiteral("report");
    case XBasis::Step:
        break;
    }
    return QStringLiteral("step");
}

bool parseXBasis(QStringView key, XBasis *basis)
{
    constexpr std::array all{XBasis::Step, XBasis::Epoch, XBasis::Report};
    const auto found = std::ranges::find_if(all, [key](XBasis b) { return key == xBasisKey(b); });
    if (found == all.end())
        return false;
    *basis = *found;
    return true;
}

QString xBasisLabel(XBasis basis)
{
    switch (basis) {
    case XBasis::Epoch:
        return QCoreApplication::translate("rankdeck::XBasis", "Epoch");
    case XBasis::Report:
        return QCoreApplication::translate("rankdeck::XBasis", "Report # (no step in the line)");
    case XBasis::Step:
        break;
    }
    return QCoreApplication::translate("rankdeck::XBasis", "Step");
}

} // namespace rankdeck
