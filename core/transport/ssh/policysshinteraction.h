// SPDX-License-Identifier: GPL-3.0-or-later
//
// An SshInteraction that asks nobody: answers come from a fixed policy. The CLI uses it in batch
// mode (--accept-new-host-keys is StrictHostKeyChecking=accept-new), tests use it to drive each
// branch of host key checking and authentication against real servers.
#pragma once

#include "transport/ssh/sshinteraction.h"

#include <QMutex>
#include <QStringList>

namespace rankdeck {

class PolicySshInteraction : public SshInteraction
{
public:
    explicit PolicySshInteraction(HostKeyDecision unknownHostKeys = HostKeyDecision::Reject);

    void setUnknownHostKeyDecision(HostKeyDecision decision);
    // Answer for passphrase and password prompts; unset: cancel them.
    void setSecret(const QByteArray &secret);

    // One password or keyboard-interactive prompt as it was asked (never the answer).
    struct SecretQuestion
    {
        QString host;
        QString user;
        QString prompt;
        bool echo = false;
    };

    // What was asked so far, for tests and for the CLI to explain a refusal.
    QList<HostKeyQuestion> hostKeyQuestions() const;
    int secretQuestionCount() const; // passphrases and secrets
    QList<SecretQuestion> secretQuestions() const;

    HostKeyDecision unknownHostKey(const HostKeyQuestion &question) override;
    std::optional<QByteArray> passphrase(const QString &host, const QString &keyFile) override;
    std::optional<QByteArray> secret(const QString &host, const QString &user,
                                     const QString &prompt, bool echo) override;

private:
    mutable QMutex m_mutex;
    HostKeyDecision m_decision;
    std::optional<QByteArray> m_secret;
    QList<HostKeyQuestion> m_questions;
    QList<SecretQuestion> m_secretPrompts;
    int m_secretQuestions = 0;
};

} // namespace rankdeck
