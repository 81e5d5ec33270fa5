// SPDX-License-Identifier: GPL-3.0-or-later
//
// The test kind's ("echo", tests/core/transport/testkind/) part of the profile editor: its
// greeting. Registered by kind name (ProfileKindForms::add), as a kind's form in gui/transport/
// <kind>/ is.
#pragma once

#include "transport/profilekindform.h"

class QLineEdit;

namespace rankdeck::testkind {

class EchoProfileForm : public ProfileKindForm
{
    Q_OBJECT
public:
    explicit EchoProfileForm(QWidget *parent = nullptr);

    void setProfile(const Profile &profile) override;
    void applyTo(Profile *profile) const override;

private:
    QLineEdit *m_greeting = nullptr;
};

} // namespace rankdeck::testkind
