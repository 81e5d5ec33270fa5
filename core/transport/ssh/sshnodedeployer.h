// SPDX-License-Identifier: GPL-3.0-or-later
//
// Prepares one node for ranks: probes it (home, OS, CPUs, GPUs) and, given a local worker,
// makes sure the node has that exact worker (SHA-256 in its name, uploaded over SFTP only when
// missing) and the libraries it needs. Everything runs in one exec channel, two when the worker
// has to be uploaded, on a session the node's connection has already opened; see the script in
// the .cpp for the protocol.
#pragma once

#include "transport/ssh/sshnode.h"

#include <QString>

#include <functional>

namespace rankdeck {

class SshSession;

class SshNodeDeployer
{
public:
    // A stage and its percentage (-1: unknown), as Transport::nodeProgress() reports them.
    using Progress = std::function<void(const QString &stage, int percent)>;

    // session must be connected and outlive the deployer.
    SshNodeDeployer(SshSession *session, const SshNodeSettings &settings, Progress progress);

    // The node check, and with a worker (localWorkerPath not empty) its deployment and library
    // check. Fills *info as far as it got; false: info->error says why the node is not usable.
    bool checkAndDeploy(const QString &localWorkerPath, SshNodeInfo *info);

    // SHA-256 (hex) of a local file such as the worker, computed once per file version for the
    // whole process (every node of every transport needs it); empty and *error when unreadable.
    static QByteArray sha256Hex(const QString &path, QString *error);
    // PT_INTERP of an ELF executable ("/lib64/ld-linux-x86-64.so.2"); empty for anything else.
    static QString elfInterpreter(const QString &path);
    // The value of an /etc/os-release line without its shell quoting.
    static QString unquoteOsRelease(const QString &value);

private:
    SshSession *m_session;
    SshNodeSettings m_settings;
    Progress m_progress;
};

} // namespace rankdeck
