// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/ssh/policysshinteraction.h"

#include <QMutexLocker>

namespace rankdeck {

PolicySshInteraction::PolicySshInteraction(HostKeyDecision unknownHostKeys)
    : m_decision(unknownHostKeys)
{}

void PolicySshInteraction::setUnknownHostKeyDecision(HostKeyDecision decision)
{
    QMutexLocker lock(&m_mutex);
    m_decision = decision;
}

void PolicySshInteraction::setSecret(const QByteArray &secret)
{
    QMutexLocker lock(&m_mutex);
    m_secret = secret;
}

QList<SshInteraction::HostKeyQuestion> PolicySshInteraction::hostKeyQuestions() const
{
    QMutexLocker lock(&m_mutex);
    return m_questions;
}

int PolicySshInteraction::secretQuestionCount() const
{
    QMutexLocker lock(&m_mutex);
    return m_secretQuestions;
}

SshInteraction::HostKeyDecision
PolicySshInteraction::unknownHostKey(const HostKeyQuestion &question)
{
    QMutexLocker lock(&m_mutex);
    m_questions.append(question);
    return m_decision;
}

std::optional<QByteArray> PolicySshInteraction::passphrase(const QString &, const QString &)
{
    QMutexLocker lock(&m_mutex);
    ++m_secretQuestions;
    return m_secret;
}

QList<PolicySshInteraction::SecretQuestion> PolicySshInteraction::secretQuestions() const
{
    QMutexLocker lock(&m_mutex);
    return m_secretPrompts;
}

std::optional<QByteArray> PolicySshInteraction::secret(const QString &host, const QString &user,
                                                       const QString &prompt, bool echo)
{
    QMutexLocker lock(&m_mutex);
    ++m_secretQuestions;
    m_secretPrompts.append({host, user, prompt, echo});
    return m_secret;
}

} // namespace rankdeck
