// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/slurm/slurmlogin.h"

#include "transport/slurm/slurmsettings.h"

#include "util/translation.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>

namespace rankdeck {

SlurmLogin::SlurmLogin(const Profile &profile, SshInteraction *interaction, QMutex *interactionLock)
{
    if (!SlurmSettings::of(profile).login.isEmpty())
        m_session = std::make_unique<SshSession>(
            SshEndpoint::fromProfileNode(SlurmSettings::of(profile).loginNode(),
                                         profile.connectTimeoutSec),
            interaction, interactionLock);
}

SlurmLogin::~SlurmLogin() = default;

QString SlurmLogin::describe() const
{
    return m_session ? tr("login %1").arg(m_session->label()) : tr("this machine");
}

bool SlurmLogin::isOpen() const
{
    return !m_session || m_session->isConnected();
}

bool SlurmLogin::open(QString *error)
{
    if (m_session && !m_session->isConnected() && !m_session->connect(error))
        return false;
    if (m_home.isEmpty()) {
        const SshExecResult r = run("printf '%s' \"$HOME\"", 30000);
        if (!r.ok() || r.out.isEmpty()) {
            *error = tr("%1: cannot read $HOME: %2").arg(describe(), r.describeFailure());
            return false;
        }
        m_home = QString::fromUtf8(r.out);
    }
    return true;
}

void SlurmLogin::close()
{
    if (m_session)
        m_session->disconnect();
}

QString SlurmLogin::expand(const QString &path) const
{
    if (path == QLatin1String("~"))
        return m_home;
    if (path.startsWith(QLatin1String("~/")))
        return m_home + path.mid(1);
    if (!path.startsWith(QLatin1Char('/')))
        return m_home + QLatin1Char('/') + path;
    return path;
}

SshExecResult SlurmLogin::run(const QByteArray &command, int timeoutMs, const QByteArray &stdinData)
{
    if (m_session)
        return m_session->exec(command, timeoutMs, stdinData);
    SshExecResult r;
    QProcess p;
    p.start(QStringLiteral("/bin/sh"), {QStringLiteral("-c"), QString::fromUtf8(command)});
    if (!p.waitForStarted(10000)) {
        r.error = tr("cannot run /bin/sh: %1").arg(p.errorString());
        return r;
    }
    if (!stdinData.isEmpty())
        p.write(stdinData);
    p.closeWriteChannel();
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished(2000);
        r.error = tr("no answer within %1 s").arg(timeoutMs / 1000);
        return r;
    }
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    r.exitStatus = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : 128 + 9;
    return r;
}

bool SlurmLogin::upload(const QString &localPath, const QString &remotePath, QString *error)
{
    if (m_session)
        return m_session->upload(localPath, remotePath, 0755, {}, error);
    QDir().mkpath(QFileInfo(remotePath).absolutePath());
    QFile::remove(remotePath);
    if (!QFile::copy(localPath, remotePath)) {
        *error = tr("cannot copy %1 to %2").arg(localPath, remotePath);
        return false;
    }
    QFile::setPermissions(remotePath, QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                          QFileDevice::ExeOwner | QFileDevice::ReadGroup |
                                          QFileDevice::ExeGroup | QFileDevice::ReadOther |
                                          QFileDevice::ExeOther);
    return true;
}

} // namespace rankdeck
