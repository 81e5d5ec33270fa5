// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/transportkind.h"

namespace rankdeck {

bool TransportKindRegistry::add(std::unique_ptr<TransportKind> kind)
{
    return ProfileKinds::add(std::move(kind));
}

const TransportKind *TransportKindRegistry::find(const QString &name)
{
    // Every kind in the registry is one (builtinProfileKinds() and add() make only those).
    return dynamic_cast<const TransportKind *>(ProfileKinds::find(name));
}

QStringList TransportKindRegistry::names()
{
    return ProfileKinds::names();
}

} // namespace rankdeck
