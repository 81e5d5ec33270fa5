// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/ssh/sshrankchannel.h"

#include "util/clock.h"
#include "util/logging.h"
#include "util/translation.h"

#include "transport/ssh/sshrankscript.h"
#include "transport/ssh/sshsession.h"

#include <QList>

#include <libssh/libssh.h>

namespace rankdeck {

namespace {

// Per stream and read(): a rank that prints without pause must not keep the other ranks of its
// node (and the connection's other work) waiting.
constexpr int kMaxBytesPerRead = 1 << 20;

} // namespace

SshRankChannel::SshRankChannel(SshSession *session, const QString &host, int rank,
                               const QString &runDirectory, const QString &baseName)
    : m_session(session), m_host(host), m_rank(rank), m_runDirectory(runDirectory),
      m_baseName(baseName)
{}

bool SshRankChannel::open(const QByteArray &command, bool attach, QString *error)
{
    ssh_session s = m_session->handle();
    ssh_channel ch = s ? ssh_channel_new(s) : nullptr;
    if (!ch || ssh_channel_open_session(ch) != SSH_OK ||
        ssh_channel_request_exec(ch, command.constData()) != SSH_OK) {
        *error = s ? QString::fromUtf8(ssh_get_error(s)) : tr("not connected");
        if (ch)
            ssh_channel_free(ch);
        qCDebug(lcSsh) << m_host << "rank" << m_rank << "cannot open its channel:" << *error;
        return false;
    }
    m_channel = ch;
    m_headerSeen = false;
    m_header.clear();
    m_earlyStderr.clear();
    m_resync = attach;
    qCDebug(lcSsh) << m_host << "rank" << m_rank
                   << (attach ? "channel re-attached" : "channel opened") << m_baseName << "in"
                   << m_runDirectory << "at stdout" << m_stdoutBytes << "stderr" << m_stderrBytes;
    return true;
}

QByteArray SshRankChannel::attachCommand(const QString &runId, int graceSec) const
{
    return SshRankScript::attach(runId, m_runDirectory, m_baseName, graceSec, m_stdoutBytes,
                                 m_stderrBytes);
}

void SshRankChannel::resumeFrom(qint64 stdoutBytes, qint64 stderrBytes)
{
    m_stdoutBytes = stdoutBytes;
    m_stderrBytes = stderrBytes;
    m_stdinBase = -1;
}

bool SshRankChannel::writeStdin(const QByteArray &data, bool live)
{
    if (m_stdinClosed || data.isEmpty())
        return false;
    m_stdinHistory += data;
    // Bytes written into a connection that turns out to be dead are not lost: the re-attach
    // resends whatever the node did not log.
    if (!m_channel || m_resync || !live)
        return false;
    ssh_channel_write(m_channel, data.constData(), uint32_t(data.size()));
    return true;
}

bool SshRankChannel::closeStdin(bool live)
{
    if (m_stdinClosed)
        return false;
    m_stdinClosed = true;
    if (!m_channel || m_resync || !live)
        return false; // the re-attach marks it and sends the EOF
    // The mark first: the keeper must not mistake this EOF for a dropped connection.
    markStdinClosed();
    if (m_channel)
        ssh_channel_send_eof(m_channel);
    return true;
}

void SshRankChannel::markStdinClosed()
{
    m_session->exec(SshRankScript::markStdinClosed(m_runDirectory, m_baseName), 10000);
}

bool SshRankChannel::takeHeader(const QByteArray &chunk, QByteArray *rest)
{
    // Anything a login script printed comes before the header line; drop it.
    m_header += chunk;
    const QByteArray prefix = SshRankScript::headerPrefix();
    int start = 0;
    if (!m_header.startsWith(prefix)) {
        const int at = m_header.indexOf('\n' + prefix);
        start = at < 0 ? -1 : at + 1;
    }
    const int end = start < 0 ? -1 : m_header.indexOf('\n', start);
    if (end < 0) {
        if (m_header.size() > 65536)
            m_header = m_header.right(prefix.size());
        return false;
    }
    const QList<QByteArray> fields =
        m_header.mid(start + prefix.size(), end - start - prefix.size()).trimmed().split(' ');
    m_pid = fields.value(0).toLongLong();
    *rest = m_header.mid(end + 1);
    if (m_resync) {
        m_resync = false;
        const qint64 received = fields.value(1).toLongLong();
        if (m_stdinBase < 0)
            m_stdinBase = received;
        if (received - m_stdinBase < m_stdinHistory.size()) {
            const QByteArray resend = m_stdinHistory.mid(received - m_stdinBase);
            ssh_channel_write(m_channel, resend.constData(), uint32_t(resend.size()));
        }
        if (m_stdinClosed)
            ssh_channel_send_eof(m_channel);
        qCDebug(lcSsh) << m_host << "rank" << m_rank << "resumed: pid" << m_pid << "the node has"
                       << received << "bytes of stdin, resent"
                       << qMax<qint64>(0, m_stdinHistory.size() - (received - m_stdinBase));
    }
    m_header.clear();
    return true;
}

qint64 SshRankChannel::read(const Sink &sink, bool *lost)
{
    char buf[32768];
    qint64 total = 0;
    for (int stream = 0; stream < 2; ++stream) {
        int budget = kMaxBytesPerRead;
        while (budget > 0) {
            const int n = ssh_channel_read_nonblocking(m_channel, buf, sizeof buf, stream);
            if (n == SSH_ERROR) {
                *lost = true;
                return total;
            }
            if (n <= 0)
                break;
            budget -= n;
            total += n;
            QByteArray chunk(buf, n);
            if (stream == 1) {
                if (!m_headerSeen) {
                    m_earlyStderr += chunk;
                    continue;
                }
                m_stderrBytes += n;
                sink.output(StreamKind::Stderr, chunk);
                continue;
            }
            if (!m_headerSeen) {
                if (!takeHeader(chunk, &chunk))
                    continue;
                m_headerSeen = true;
                if (!m_startedReported) {
                    m_startedReported = true;
                    sink.started(m_pid);
                }
                // stderr that arrived before the header is login noise or a setup error; once
                // the rank runs, its stderr only starts after the header.
                m_earlyStderr.clear();
                if (chunk.isEmpty())
                    continue;
            }
            m_stdoutBytes += chunk.size();
            sink.output(StreamKind::Stdout, chunk);
        }
    }
    return total;
}

bool SshRankChannel::hasBufferedData() const
{
    return m_channel && (ssh_channel_poll(m_channel, 0) > 0 || ssh_channel_poll(m_channel, 1) > 0);
}

bool SshRankChannel::atEnd() const
{
    return ssh_channel_is_eof(m_channel) || ssh_channel_is_closed(m_channel);
}

RankExit SshRankChannel::finish()
{
    const int status = ssh_channel_get_exit_status(m_channel);
    ssh_channel_close(m_channel);
    ssh_channel_free(m_channel);
    m_channel = nullptr;
    qCDebug(lcSsh) << m_host << "rank" << m_rank << "channel closed, exit status" << status
                   << "after stdout" << m_stdoutBytes << "stderr" << m_stderrBytes;
    RankExit exit;
    exit.timeUs = nowUs();
    if (!m_headerSeen) {
        exit.exitCode = status < 0 ? -1 : status;
        const QString why = QString::fromUtf8(m_earlyStderr.trimmed());
        exit.detail = tr("failed to start on %1: %2")
                          .arg(m_host, why.isEmpty() ? tr("exit status %1").arg(status) : why);
    } else if (status > 128 && status <= 128 + 64) {
        exit.crashed = true;
        exit.signal = status - 128;
    } else if (status < 0 || (status == SshRankScript::kExitUnknown && m_startedReported)) {
        exit.exitCode = -1;
        exit.detail = tr("%1: the rank's exit status is unknown").arg(m_host);
    } else {
        exit.exitCode = status;
    }
    return exit;
}

void SshRankChannel::drop()
{
    if (m_channel)
        ssh_channel_free(m_channel);
    m_channel = nullptr;
}

void SshRankChannel::close(bool connected)
{
    if (m_channel && connected) {
        ssh_channel_close(m_channel);
        ssh_channel_free(m_channel);
    }
    m_channel = nullptr;
}

} // namespace rankdeck
