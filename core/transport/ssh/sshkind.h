// SPDX-License-Identifier: GPL-3.0-or-later
//
// The "ssh" kind: ranks on the profile's [[nodes]] over SSH (SshTransport); no table of its own.
#pragma once

#include "transport/transportkind.h"

namespace rankdeck {

class SshKind : public TransportKind
{
public:
    QString name() const override;
    QString displayName() const override;
    QString nodesProblem(bool hasNodes, bool cli) const override;
    Transport *create(const Profile &profile, const QString &runId, SshInteraction *interaction,
                      QObject *parent) const override;
};

} // namespace rankdeck
