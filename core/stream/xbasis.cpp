// SPDX-License-Identifier: GPL-3.0-or-later
#include "stream/xbasis.h"

#include <QCoreApplication>

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
    for (XBasis b : {XBasis::Step, XBasis::Epoch, XBasis::Report}) {
        if (key == xBasisKey(b)) {
            *basis = b;
            return true;
        }
    }
    return false;
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
