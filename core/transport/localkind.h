// SPDX-License-Identifier: GPL-3.0-or-later
//
// The "local" kind: ranks as processes of this machine (LocalTransport); nodes from [[nodes]],
// no table of its own.
#pragma once

#include "transport/transportkind.h"

namespace rankdeck {

class LocalKind : public TransportKind
{
public:
    QString name() const override;
    QString displayName() const override;
    Transport *create(const Profile &profile, const QString &runId, SshInteraction *interaction,
                      QObject *parent) const override;
};

} // namespace rankdeck
