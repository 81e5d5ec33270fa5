// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/localkind.h"

#include "transport/localtransport.h"

#include "util/translation.h"

namespace rankdeck {

QString LocalKind::name() const
{
    return QStringLiteral("local");
}

QString LocalKind::displayName() const
{
    return tr("Local processes");
}

Transport *LocalKind::create(const Profile &, const QString &, SshInteraction *,
                             QObject *parent) const
{
    return new LocalTransport(parent);
}

} // namespace rankdeck
