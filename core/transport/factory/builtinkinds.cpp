// SPDX-License-Identifier: GPL-3.0-or-later
//
// The built-in transport kinds: the one file that names them all (a new kind is one line here).
// config/profilekind.h declares builtinProfileKinds(); the registry calls it on first use, so that
// every front end and test sees the same kinds without registering them.
#include "config/profilekind.h"
#include "transport/localkind.h"
#include "transport/slurm/slurmkind.h"
#include "transport/ssh/sshkind.h"

namespace rankdeck {

std::vector<std::unique_ptr<ProfileKind>> builtinProfileKinds()
{
    // This order is the order messages list them in ("local", "ssh" or "slurm").
    std::vector<std::unique_ptr<ProfileKind>> kinds;
    kinds.push_back(std::make_unique<LocalKind>());
    kinds.push_back(std::make_unique<SshKind>());
    kinds.push_back(std::make_unique<SlurmKind>());
    return kinds;
}

} // namespace rankdeck
