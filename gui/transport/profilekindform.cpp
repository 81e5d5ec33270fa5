// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/profilekindform.h"

#include <QMap>

namespace rankdeck {

namespace {

// Forms are made on the GUI thread only, so no lock.
QMap<QString, ProfileKindForms::Factory> &forms()
{
    static QMap<QString, ProfileKindForms::Factory> all = [] {
        QMap<QString, ProfileKindForms::Factory> made;
        for (const auto &[kind, factory] : builtinProfileKindForms())
            made.insert(kind, factory);
        return made;
    }();
    return all;
}

} // namespace

bool ProfileKindForms::add(const QString &kind, const Factory &factory)
{
    if (forms().contains(kind))
        return false;
    forms().insert(kind, factory);
    return true;
}

ProfileKindForm *ProfileKindForms::create(const QString &kind, QWidget *parent)
{
    const auto it = forms().constFind(kind);
    return it == forms().cend() ? nullptr : (*it)(parent);
}

} // namespace rankdeck
