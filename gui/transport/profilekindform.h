// SPDX-License-Identifier: GPL-3.0-or-later
//
// A transport kind's part of the profile editor: the form of its own table ([slurm]), shown
// instead of the node table or beside it when the profile's transport is that kind. Each kind's
// form lives in gui/transport/<kind>/ and is registered by kind name
// (gui/transport/builtinkindforms.cpp); ProfileEditorDialog asks ProfileKindForms for them.
// Validation stays core's (ProfileKind::validateSection()).
#pragma once

#include "config/profile.h"

#include <QGroupBox>
#include <QStringList>

#include <functional>

namespace rankdeck {

class ProfileKindForm : public QGroupBox
{
    Q_OBJECT
public:
    using QGroupBox::QGroupBox;

    // Shows the profile's table (its defaults when it has none).
    virtual void setProfile(const Profile &profile) = 0;
    // Writes the form into the profile's table (and its kind's placeholder nodes).
    virtual void applyTo(Profile *profile) const = 0;
    // What the form itself cannot turn into the table ("slurm.login: … is not HOST:PORT").
    virtual QStringList problems() const { return {}; }

signals:
    void changed();
};

// The forms by kind name: the built-in ones (registered on first use), then any added.
class ProfileKindForms
{
public:
    using Factory = std::function<ProfileKindForm *(QWidget *parent)>;
    // false when the kind has a form already.
    static bool add(const QString &kind, const Factory &factory);
    // A new form for the kind, owned by parent; nullptr when the kind has none.
    static ProfileKindForm *create(const QString &kind, QWidget *parent);
};

// The built-in kinds' forms; defined in gui/transport/builtinkindforms.cpp, the one file of gui/
// that names each.
QList<std::pair<QString, ProfileKindForms::Factory>> builtinProfileKindForms();

} // namespace rankdeck
