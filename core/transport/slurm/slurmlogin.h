// SPDX-License-Identifier: GPL-3.0-or-later
//
// Where the Slurm commands run: this machine (an empty `login`: a /bin/sh child per command, with
// this process's environment, so SLURM_CONF and the user's other Slurm variables apply as in
// their shell) or a login node over SSH (SshSession: ~/.ssh/config, ProxyJump, known_hosts,
// keys, as for SSH profiles). Every call blocks: the login lives on the job connection's thread.
#pragma once

#include "config/profile.h"
#include "transport/ssh/sshsession.h"

#include <QByteArray>
#include <QString>

#include <memory>

class QMutex;

namespace rankdeck {

class SshInteraction;

class SlurmLogin
{
public:
    SlurmLogin(const Profile &profile, SshInteraction *interaction, QMutex *interactionLock);
    ~SlurmLogin();

    bool isRemote() const { return m_session != nullptr; }
    // "this machine" or the login node's user@host:port.
    QString describe() const;
    // Connects (SSH) and learns the login's $HOME; false and *error naming the login otherwise.
    bool open(QString *error);
    bool isOpen() const;
    void close();
    QString home() const { return m_home; }
    // "~" and "~/…" in the login's home.
    QString expand(const QString &path) const;

    // Runs a POSIX sh command; stdinData is its standard input.
    SshExecResult run(const QByteArray &command, int timeoutMs = 30000,
                      const QByteArray &stdinData = {});
    // Copies a local file to an absolute path on the login's file system (mode 0755); callers
    // copy to a temporary name and rename it into place.
    bool upload(const QString &localPath, const QString &remotePath, QString *error);

private:
    std::unique_ptr<SshSession> m_session;
    QString m_home;
};

} // namespace rankdeck
