// SPDX-License-Identifier: GPL-3.0-or-later
//
// A transport kind: everything RankDeck knows of one way of running ranks (local processes, SSH,
// Slurm, …), in the kind's own folder. Its profile part (ProfileKind: its table, its checks, its
// `profiles add` flags) and the Transport it starts for a profile. TransportFactory and
// ConnectionCheck ask the kind a profile names; `profiles check` and Test connection then need
// nothing of it but what Transport says (nodeReport(), checkSummary(), nodeName()).
//
// Adding a kind: a folder core/transport/<kind>/ with a TransportKind subclass, one line in
// core/transport/factory/builtinkinds.cpp (or TransportKindRegistry::add() from a test), and its
// editor form under gui/transport/<kind>/ registered in gui/transport/builtinkindforms.cpp.
#pragma once

#include "config/profilekind.h"

#include <QString>
#include <QStringList>

#include <memory>

class QObject;

namespace rankdeck {

class SshInteraction;
class Transport;

class TransportKind : public ProfileKind
{
public:
    // The transport for a run (or a check) of the profile, owned by parent. interaction answers
    // an SSH prompt (host keys, passphrases) for kinds that use SSH; others ignore it.
    virtual Transport *create(const Profile &profile, const QString &runId,
                              SshInteraction *interaction, QObject *parent) const = 0;
};

// The kinds by name (ProfileKinds, which the profile store asks too).
class TransportKindRegistry
{
public:
    // false when a kind of that name exists already.
    static bool add(std::unique_ptr<TransportKind> kind);
    // nullptr when no kind has that name.
    static const TransportKind *find(const QString &name);
    static QStringList names();
};

} // namespace rankdeck
