// SPDX-License-Identifier: GPL-3.0-or-later
#include "echoprofileform.h"

#include "transport/transportkind.h"

#include <QFormLayout>
#include <QLineEdit>

namespace rankdeck::testkind {

EchoProfileForm::EchoProfileForm(QWidget *parent) : ProfileKindForm(QStringLiteral("Echo"), parent)
{
    m_greeting = new QLineEdit(this);
    m_greeting->setObjectName(QStringLiteral("echoGreetingEdit"));
    connect(m_greeting, &QLineEdit::textChanged, this, &ProfileKindForm::changed);
    auto *form = new QFormLayout(this);
    form->addRow(QStringLiteral("Greeting:"), m_greeting);
}

void EchoProfileForm::setProfile(const Profile &profile)
{
    const QSignalBlocker blocker(this);
    m_greeting->setText(profile.section.value(QStringLiteral("greeting")).toString());
}

void EchoProfileForm::applyTo(Profile *profile) const
{
    QJsonObject section = profile->section;
    section[QStringLiteral("greeting")] = m_greeting->text().trimmed();
    profile->section =
        TransportKindRegistry::find(QStringLiteral("echo"))->completeSection(section);
}

} // namespace rankdeck::testkind
