// SPDX-License-Identifier: GPL-3.0-or-later
//
// Answers the SSH transport's questions on the terminal: unknown host keys are refused unless
// --accept-new-host-keys was given (like StrictHostKeyChecking=accept-new), passphrases and
// passwords are read from /dev/tty with echo off. Without a terminal every question is refused.
#pragma once

#include "transport/ssh/sshinteraction.h"

#include <QMutex>

namespace rankdeck::cli {

class TerminalSshInteraction : public SshInteraction
{
public:
    explicit TerminalSshInteraction(bool acceptNewHostKeys) : m_acceptNew(acceptNewHostKeys) {}

    HostKeyDecision unknownHostKey(const HostKeyQuestion &question) override;
    std::optional<QByteArray> passphrase(const QString &host, const QString &keyFile) override;
    std::optional<QByteArray> secret(const QString &host, const QString &user,
                                     const QString &prompt, bool echo) override;

private:
    std::optional<QByteArray> readTty(const QString &prompt, bool echo);

    bool m_acceptNew;
    QMutex m_mutex;
};

} // namespace rankdeck::cli
