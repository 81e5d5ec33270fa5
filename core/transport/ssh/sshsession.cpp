// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/ssh/sshsession.h"

#include "util/logging.h"
#include "util/translation.h"

#include "config/profile.h"
#include "transport/ssh/sshauthenticator.h"
#include "transport/ssh/sshconfigfile.h"
#include "transport/ssh/sshexecupload.h"
#include "transport/ssh/sshhostkeyverifier.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include <fcntl.h>

#include <cstring>
#include <memory>

namespace rankdeck {

namespace {

QString expandHome(const QString &path)
{
    if (path == QLatin1String("~"))
        return QDir::homePath();
    if (path.startsWith(QLatin1String("~/")))
        return QDir::homePath() + path.mid(1);
    return path;
}

QString optionString(ssh_session session, ssh_options_e option)
{
    char *value = nullptr;
    if (ssh_options_get(session, option, &value) != SSH_OK || !value)
        return {};
    QString s = QString::fromUtf8(value);
    ssh_string_free_char(value);
    return s;
}

} // namespace

SshEndpoint SshEndpoint::fromProfileNode(const ProfileNode &node, int timeoutSec)
{
    SshEndpoint e;
    e.host = node.host;
    e.port = node.port == 22 ? 0 : node.port;
    e.user = node.user;
    e.identityFile = node.identityFile;
    e.connectTimeoutSec = timeoutSec > 0 ? timeoutSec : 10;
    return e;
}

QString SshEndpoint::effectiveSshDirectory() const
{
    return sshDirectory.isEmpty() ? QDir::homePath() + QStringLiteral("/.ssh")
                                  : expandHome(sshDirectory);
}

QString SshEndpoint::effectiveKnownHostsFile() const
{
    return knownHostsFile.isEmpty() ? effectiveSshDirectory() + QStringLiteral("/known_hosts")
                                    : expandHome(knownHostsFile);
}

QString SshEndpoint::effectiveConfigFile() const
{
    return configFile.isEmpty() ? effectiveSshDirectory() + QStringLiteral("/config")
                                : expandHome(configFile);
}

QString SshExecResult::describeFailure() const
{
    if (!error.isEmpty())
        return error;
    QString text = QString::fromUtf8(err.trimmed().isEmpty() ? out.trimmed() : err.trimmed());
    if (!text.isEmpty())
        return text;
    return QCoreApplication::translate("rankdeck::SshSession", "exit status %1").arg(exitStatus);
}

SshSession::SshSession(const SshEndpoint &endpoint, SshInteraction *interaction,
                       QMutex *interactionLock)
    : m_endpoint(endpoint),
      m_hostKeys(std::make_unique<SshHostKeyVerifier>(interaction, interactionLock)),
      m_authenticator(std::make_unique<SshAuthenticator>(interaction, interactionLock))
{
    static const bool initialized = [] {
        ssh_init();
        return true;
    }();
    Q_UNUSED(initialized);
    m_address = endpoint.host;
    m_port = endpoint.port > 0 ? endpoint.port : 22;
}

SshSession::~SshSession()
{
    disconnect();
}

void SshSession::disconnect()
{
    m_proxyFiles.reset();
    if (m_session) {
        if (ssh_is_connected(m_session))
            ssh_disconnect(m_session);
        ssh_free(m_session);
        m_session = nullptr;
    }
    delete m_callbacks;
    m_callbacks = nullptr;
}

bool SshSession::isConnected() const
{
    return m_session && ssh_is_connected(m_session);
}

QString SshSession::label() const
{
    QString s = m_address;
    if (!m_user.isEmpty())
        s = m_user + QLatin1Char('@') + s;
    return s + QLatin1Char(':') + QString::number(m_port);
}

bool SshSession::connect(QString *error)
{
    m_sftpAvailable = true;
    disconnect();
    if (m_endpoint.host.trimmed().isEmpty()) {
        *error = tr("node has no host name");
        return false;
    }
    m_session = ssh_new();
    if (!m_session) {
        *error = tr("%1: cannot create an SSH session").arg(m_endpoint.host);
        return false;
    }
    const QByteArray host = m_endpoint.host.toUtf8();
    ssh_options_set(m_session, SSH_OPTIONS_HOST, host.constData());
    const QByteArray sshDir = QFile::encodeName(m_endpoint.effectiveSshDirectory());
    ssh_options_set(m_session, SSH_OPTIONS_SSH_DIR, sshDir.constData());

    // The user's config first, then the system's, like OpenSSH; explicit so that libssh does not
    // read the passwd entry's home instead of $HOME.
    const QString userConfig = m_endpoint.effectiveConfigFile();
    if (QFileInfo::exists(userConfig) &&
        ssh_options_parse_config(m_session, QFile::encodeName(userConfig).constData()) != SSH_OK) {
        *error = tr("%1: cannot read %2: %3")
                     .arg(m_endpoint.host, userConfig, QString::fromUtf8(ssh_get_error(m_session)));
        disconnect();
        return false;
    }
    if (QFileInfo::exists(QStringLiteral("/etc/ssh/ssh_config")))
        ssh_options_parse_config(m_session, "/etc/ssh/ssh_config");
    bool processConfig = false;
    ssh_options_set(m_session, SSH_OPTIONS_PROCESS_CONFIG, &processConfig);

    if (m_endpoint.port > 0) {
        unsigned int port = unsigned(m_endpoint.port);
        ssh_options_set(m_session, SSH_OPTIONS_PORT, &port);
    }
    if (!m_endpoint.user.isEmpty()) {
        const QByteArray user = m_endpoint.user.toUtf8();
        ssh_options_set(m_session, SSH_OPTIONS_USER, user.constData());
    }
    const QByteArray knownHosts = QFile::encodeName(m_endpoint.effectiveKnownHostsFile());
    ssh_options_set(m_session, SSH_OPTIONS_KNOWNHOSTS, knownHosts.constData());
    long timeout = m_endpoint.connectTimeoutSec;
    ssh_options_set(m_session, SSH_OPTIONS_TIMEOUT, &timeout);
    // Small writes (control commands, SFTP requests) must not wait for delayed ACKs: with Nagle
    // on, every synchronous SFTP write of 32 KiB cost ~40 ms on loopback (0.8 MB/s).
    int nodelay = 1;
    ssh_options_set(m_session, SSH_OPTIONS_NODELAY, &nodelay);

    m_address = optionString(m_session, SSH_OPTIONS_HOST);
    if (m_address.isEmpty())
        m_address = m_endpoint.host;
    m_user = optionString(m_session, SSH_OPTIONS_USER);
    unsigned int port = 22;
    if (ssh_options_get_port(m_session, &port) == SSH_OK)
        m_port = int(port);

    if (!applyProxyJump(error)) {
        disconnect();
        return false;
    }

    m_callbacks = new ssh_callbacks_struct;
    std::memset(m_callbacks, 0, sizeof *m_callbacks);
    m_callbacks->userdata = m_authenticator.get();
    m_callbacks->auth_function = &SshAuthenticator::promptCallback;
    ssh_callbacks_init(m_callbacks);
    ssh_set_callbacks(m_session, m_callbacks);

    if (m_proxyJump.isEmpty())
        qCDebug(lcSsh) << m_endpoint.host << "connecting to" << label() << "timeout"
                       << m_endpoint.connectTimeoutSec << "s";
    else
        qCDebug(lcSsh) << m_endpoint.host << "connecting to" << label() << "timeout"
                       << m_endpoint.connectTimeoutSec << "s"
                       << "through the jump host" << m_proxyJump;
    if (ssh_connect(m_session) != SSH_OK) {
        if (m_proxyJump.isEmpty()) {
            *error = tr("%1: cannot connect to %2:%3: %4")
                         .arg(m_endpoint.host, m_address, QString::number(m_port),
                              QString::fromUtf8(ssh_get_error(m_session)));
        } else {
            const QString said = proxyJumpOutput();
            *error =
                tr("%1: cannot connect to %2:%3 through the jump host %4 (ProxyJump in %5): %6")
                    .arg(m_endpoint.host, m_address, QString::number(m_port), m_proxyJump,
                         m_endpoint.effectiveConfigFile(),
                         said.isEmpty() ? QString::fromUtf8(ssh_get_error(m_session)) : said);
        }
        disconnect();
        return false;
    }
    m_keepAliveSec = m_endpoint.keepAliveIntervalSec >= 0 ? m_endpoint.keepAliveIntervalSec
                                                          : configuredServerAliveInterval();
    m_keepAlivesSent = 0;
    m_lastKeepAliveMs = QDateTime::currentMSecsSinceEpoch();
    // libssh fills in the local user name only while connecting.
    if (m_user.isEmpty())
        m_user = optionString(m_session, SSH_OPTIONS_USER);
    qCDebug(lcSsh) << m_endpoint.host << "connected to" << label() << "keepalive every"
                   << m_keepAliveSec << "s";
    SshHostKeyVerifier::Server server;
    server.host = m_endpoint.host;
    server.address = m_address;
    server.port = m_port;
    server.knownHostsFile = m_endpoint.effectiveKnownHostsFile();
    SshAuthenticator::Account account;
    account.host = m_endpoint.host;
    account.user = m_user;
    account.address = m_address;
    account.label = label();
    account.identityFile = expandHome(m_endpoint.identityFile);
    account.sshDirectory = m_endpoint.effectiveSshDirectory();
    if (!m_hostKeys->verify(m_session, server, error) ||
        !m_authenticator->authenticate(m_session, account, error)) {
        qCDebug(lcSsh) << m_endpoint.host << "connect failed:" << *error;
        disconnect();
        return false;
    }
    return true;
}

QString SshSession::serverFingerprint() const
{
    return m_hostKeys->serverFingerprint();
}

namespace {

// A path inside an OpenSSH config line.
QString configWord(const QString &path)
{
    QString quoted = path;
    quoted.replace(QLatin1Char('"'), QStringLiteral("\\\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
}

} // namespace

// libssh 0.10 reads ProxyJump from ~/.ssh/config and turns it into a ProxyCommand that runs the
// OpenSSH client: "ssh [-l user] [-p port] [-J more] -W '[%h]:%p' first-hop". As written, that
// client reads the passwd entry's ~/.ssh (not $HOME's, nor the config file this session uses),
// so a jump host defined only there is not found, its host key is checked against another
// known_hosts, a password prompt could block on the terminal, and with several hops the order is
// reversed (libssh puts the first hop last). The command is rebuilt here from the same pieces,
// with a generated config (the same known_hosts, batch mode, the profile's timeout and key, then
// the user's and the system's config) that OpenSSH also hands to the ssh it runs for earlier hops.
bool SshSession::applyProxyJump(QString *error)
{
    m_proxyJump.clear();
    m_proxyFiles.reset();
    const std::optional<sshconfig::ProxyJumpChain> chain =
        sshconfig::proxyJumpFromLibsshCommand(optionString(m_session, SSH_OPTIONS_PROXYCOMMAND));
    if (!chain)
        return true; // none, or the user's own ProxyCommand: run as written
    m_proxyJump = chain->joined();

    const QString ssh = QStandardPaths::findExecutable(QStringLiteral("ssh"));
    if (ssh.isEmpty()) {
        *error =
            tr("%1: %2 reaches it through the jump host %3 (ProxyJump), which needs the OpenSSH "
               "client program ssh on this computer; install it (Debian/Ubuntu: apt-get install "
               "openssh-client) or remove the ProxyJump line")
                .arg(m_endpoint.host, m_endpoint.effectiveConfigFile(), m_proxyJump);
        return false;
    }
    m_proxyFiles = std::make_unique<QTemporaryDir>(QDir::tempPath() +
                                                   QStringLiteral("/rankdeck-proxyjump-XXXXXX"));
    const QString configPath = m_proxyFiles->filePath(QStringLiteral("ssh_config"));
    QFile config(configPath);
    if (!m_proxyFiles->isValid() || !config.open(QIODevice::WriteOnly)) {
        *error = tr("%1: cannot write the configuration for the jump host %2 in %3")
                     .arg(m_endpoint.host, m_proxyJump, QDir::tempPath());
        return false;
    }
    // First value wins in OpenSSH, so these come before the user's own settings. Nobody can
    // answer the jump's prompts (RankDeck's questions go to this session): keys and the agent
    // only, unknown jump host keys refused.
    QStringList lines{
        QStringLiteral("UserKnownHostsFile %1")
            .arg(configWord(m_endpoint.effectiveKnownHostsFile())),
        QStringLiteral("BatchMode yes"),
        QStringLiteral("ConnectTimeout %1").arg(qMax(1, m_endpoint.connectTimeoutSec))};
    if (!m_endpoint.identityFile.isEmpty())
        lines << QStringLiteral("IdentityFile %1")
                     .arg(configWord(expandHome(m_endpoint.identityFile)));
    for (const QString &file :
         {m_endpoint.effectiveConfigFile(), QStringLiteral("/etc/ssh/ssh_config")}) {
        if (QFileInfo::exists(file))
            lines
                << QStringLiteral("Include %1").arg(configWord(QFileInfo(file).absoluteFilePath()));
    }
    config.write((lines.join(QLatin1Char('\n')) + QLatin1Char('\n')).toUtf8());
    config.close();

    const QByteArray command = sshconfig::proxyJumpCommand(
        ssh, configPath, m_proxyFiles->filePath(QStringLiteral("stderr.log")), *chain);
    if (ssh_options_set(m_session, SSH_OPTIONS_PROXYCOMMAND, command.constData()) != SSH_OK) {
        *error =
            tr("%1: cannot use the jump host %2: %3")
                .arg(m_endpoint.host, m_proxyJump, QString::fromUtf8(ssh_get_error(m_session)));
        return false;
    }
    return true;
}

// The last lines the jump's ssh wrote ("Permission denied (publickey).", "Host key
// verification failed."), for the message of a failed connect.
QString SshSession::proxyJumpOutput() const
{
    if (!m_proxyFiles)
        return {};
    QFile f(m_proxyFiles->filePath(QStringLiteral("stderr.log")));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    QStringList lines =
        QString::fromLocal8Bit(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    for (QString &l : lines)
        l = l.trimmed();
    lines.removeAll(QString());
    while (lines.size() > 3)
        lines.removeFirst();
    return lines.join(QStringLiteral("; "));
}

bool SshSession::keepAlive()
{
    if (!isConnected())
        return false;
    if (m_keepAliveSec <= 0)
        return true;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    if (now - m_lastKeepAliveMs < qint64(m_keepAliveSec) * 1000)
        return true;
    m_lastKeepAliveMs = now;
    // An ignore message needs no answer, so nothing here waits on the network.
    if (ssh_send_ignore(m_session, "") != SSH_OK)
        return false;
    ++m_keepAlivesSent;
    return isConnected();
}

// libssh 0.10 parses ServerAliveInterval and drops it, so it is read here: the user's config,
// then the system's, first value wins.
int SshSession::configuredServerAliveInterval() const
{
    constexpr int fallback = 60;
    for (const QString &path :
         {m_endpoint.effectiveConfigFile(), QStringLiteral("/etc/ssh/ssh_config")}) {
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            continue;
        if (const std::optional<int> seconds =
                sshconfig::serverAliveInterval(file.readAll(), m_endpoint.host))
            return *seconds >= 0 ? *seconds : fallback;
    }
    return fallback;
}

SshExecResult SshSession::exec(const QByteArray &command, int timeoutMs,
                               const QByteArray &stdinData)
{
    SshExecResult result;
    if (!isConnected()) {
        result.error = tr("%1: not connected").arg(label());
        return result;
    }
    ssh_channel channel = ssh_channel_new(m_session);
    if (!channel || ssh_channel_open_session(channel) != SSH_OK ||
        ssh_channel_request_exec(channel, command.constData()) != SSH_OK) {
        result.error = tr("%1: cannot run a command: %2")
                           .arg(label(), QString::fromUtf8(ssh_get_error(m_session)));
        if (channel)
            ssh_channel_free(channel);
        return result;
    }
    if (!stdinData.isEmpty())
        ssh_channel_write(channel, stdinData.constData(), uint32_t(stdinData.size()));
    ssh_channel_send_eof(channel);

    QDeadlineTimer deadline(timeoutMs);
    char buf[16384];
    for (;;) {
        bool got = false;
        for (int stream = 0; stream < 2; ++stream) {
            const int n = ssh_channel_read_nonblocking(channel, buf, sizeof buf, stream);
            if (n == SSH_ERROR) {
                result.error = tr("%1: connection lost while running a command").arg(label());
                ssh_channel_free(channel);
                return result;
            }
            if (n > 0) {
                (stream ? result.err : result.out).append(buf, n);
                got = true;
            }
        }
        if (got)
            continue;
        if (ssh_channel_is_eof(channel))
            break;
        if (deadline.hasExpired()) {
            result.error =
                tr("%1: a command did not finish within %2 s").arg(label()).arg(timeoutMs / 1000);
            ssh_channel_close(channel);
            ssh_channel_free(channel);
            return result;
        }
        if (ssh_channel_poll_timeout(channel, 50, 0) == SSH_ERROR && !ssh_channel_is_eof(channel)) {
            result.error = tr("%1: connection lost while running a command").arg(label());
            ssh_channel_free(channel);
            return result;
        }
    }
    result.exitStatus = ssh_channel_get_exit_status(channel);
    ssh_channel_close(channel);
    ssh_channel_free(channel);
    return result;
}

bool SshSession::upload(const QString &localPath, const QString &remotePath, int mode,
                        const std::function<void(qint64, qint64)> &progress, QString *error)
{
    QFile local(localPath);
    if (!local.open(QIODevice::ReadOnly)) {
        *error = tr("cannot read %1: %2").arg(localPath, local.errorString());
        return false;
    }
    if (!m_sftpAvailable)
        return SshExecUpload::upload(m_session, label(), localPath, remotePath, mode, progress,
                                     error);
    sftp_session sftp = sftp_new(m_session);
    if (!sftp || sftp_init(sftp) != SSH_OK) {
        // Hardened sshd configurations often have no SFTP subsystem: an exec channel does it,
        // checked by a hash on the node (and this session does not ask for SFTP again).
        qCDebug(lcSsh) << label() << "SFTP is not available:" << ssh_get_error(m_session);
        if (sftp)
            sftp_free(sftp);
        if (!isConnected()) {
            *error = tr("%1: the connection was lost before uploading %2").arg(label(), remotePath);
            return false;
        }
        m_sftpAvailable = false;
        return SshExecUpload::upload(m_session, label(), localPath, remotePath, mode, progress,
                                     error);
    }
    const QByteArray remote = remotePath.toUtf8();
    sftp_file file =
        sftp_open(sftp, remote.constData(), O_WRONLY | O_CREAT | O_TRUNC, mode_t(mode));
    if (!file) {
        *error = tr("%1: cannot create %2: %3")
                     .arg(label(), remotePath, QString::fromUtf8(ssh_get_error(m_session)));
        sftp_free(sftp);
        return false;
    }
    const qint64 total = local.size();
    qint64 sent = 0;
    bool ok = true;
    QByteArray chunk;
    while (ok && !local.atEnd()) {
        // libssh 0.10 writes synchronously (one round trip per request); 128 KiB requests
        // (below OpenSSH's 256 KiB message limit) measured ~4x faster than 32 KiB ones.
        chunk = local.read(131072);
        if (chunk.isEmpty())
            break;
        qint64 off = 0;
        while (off < chunk.size()) {
            const ssize_t n = sftp_write(file, chunk.constData() + off, size_t(chunk.size() - off));
            if (n <= 0) {
                *error = tr("%1: writing %2 failed: %3")
                             .arg(label(), remotePath, QString::fromUtf8(ssh_get_error(m_session)));
                ok = false;
                break;
            }
            off += n;
        }
        sent += off;
        if (progress)
            progress(sent, total);
    }
    if (sftp_close(file) != SSH_OK && ok) {
        *error = tr("%1: closing %2 failed").arg(label(), remotePath);
        ok = false;
    }
    sftp_free(sftp);
    return ok;
}

} // namespace rankdeck
