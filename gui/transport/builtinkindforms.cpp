// SPDX-License-Identifier: GPL-3.0-or-later
//
// The built-in kinds' profile editor forms: the one file of gui/ that names each (a new kind's
// form is one line here). Kinds without a table (local, ssh) have none.
#include "transport/profilekindform.h"
#include "transport/slurm/slurmprofileform.h"

namespace rankdeck {

QList<std::pair<QString, ProfileKindForms::Factory>> builtinProfileKindForms()
{
    return {
        {QStringLiteral("slurm"), [](QWidget *parent) { return new SlurmProfileForm(parent); }},
    };
}

} // namespace rankdeck
