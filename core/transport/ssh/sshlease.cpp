// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/ssh/sshlease.h"

#include "util/logging.h"

#include "transport/ssh/sshrankscript.h"
#include "transport/ssh/sshsession.h"

#include <QDateTime>

#include <libssh/libssh.h>

namespace rankdeck {

namespace {

// About every tick of the pump's 250 ms timer: the node's grace is whole seconds (at least 1), so
// a link stall shorter than the grace by a quarter of a second is never taken for a cut.
constexpr qint64 kBeatIntervalMs = 200;
// A channel the node refused is asked for again this often, not on every poll.
constexpr qint64 kReopenIntervalMs = 5000;
// Opening the channel blocks the node's thread for two round trips: not while a new rank's first
// words (rank 0's store port, which the other ranks wait for; the hello) are on their way.
constexpr qint64 kOpenDelayMs = 1000;

qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

} // namespace

SshLease::SshLease(SshSession *session) : m_session(session) {}

SshLease::~SshLease()
{
    drop();
}

void SshLease::setTerms(const QString &tag, const QString &runDirectory, int graceSec)
{
    if (tag == m_tag && runDirectory == m_runDirectory && graceSec == m_graceSec)
        return;
    close(m_session->isConnected());
    m_lastOpenTryMs = nowMs() - kReopenIntervalMs + kOpenDelayMs;
    m_tag = tag;
    m_runDirectory = runDirectory;
    m_graceSec = graceSec;
}

bool SshLease::open()
{
    const qint64 now = nowMs();
    if (now - m_lastOpenTryMs < kReopenIntervalMs)
        return false;
    m_lastOpenTryMs = now;
    ssh_session s = m_session->handle();
    ssh_channel ch = s ? ssh_channel_new(s) : nullptr;
    const QByteArray command = SshRankScript::lease(m_tag, m_runDirectory, m_graceSec);
    if (!ch || ssh_channel_open_session(ch) != SSH_OK ||
        ssh_channel_request_exec(ch, command.constData()) != SSH_OK) {
        qCDebug(lcSsh) << m_session->endpoint().host
                       << "lease channel not opened:" << (s ? ssh_get_error(s) : "not connected");
        if (ch)
            ssh_channel_free(ch);
        return false;
    }
    m_channel = ch;
    m_lastBeatMs = 0;
    qCDebug(lcSsh) << m_session->endpoint().host << "lease opened, grace" << m_graceSec << "s";
    return true;
}

qint64 SshLease::service()
{
    if (!isWanted())
        return 0;
    if (!m_channel && (!m_session->isConnected() || !open()))
        return m_session->isConnected() ? 0 : -1;
    const qint64 now = nowMs();
    if (now - m_lastBeatMs >= kBeatIntervalMs) {
        m_lastBeatMs = now;
        if (ssh_channel_write(m_channel, ".", 1) == SSH_ERROR)
            return -1;
    }
    char buf[256];
    qint64 heard = 0;
    for (int stream = 0; stream < 2; ++stream) {
        int n;
        while ((n = ssh_channel_read_nonblocking(m_channel, buf, sizeof buf, stream)) > 0)
            heard += n;
        if (n == SSH_ERROR)
            return -1;
    }
    if (ssh_channel_is_eof(m_channel) || ssh_channel_is_closed(m_channel)) {
        // The node's side ended (it gave up on us, or has no shell for it): asked for again
        // later; the ranks' own channels tell what happened to them.
        qCDebug(lcSsh) << m_session->endpoint().host << "lease channel ended by the node";
        close(true);
    }
    return heard;
}

bool SshLease::hasBufferedData() const
{
    return m_channel && (ssh_channel_poll(m_channel, 0) > 0 || ssh_channel_poll(m_channel, 1) > 0);
}

void SshLease::drop()
{
    if (m_channel)
        ssh_channel_free(m_channel);
    m_channel = nullptr;
}

void SshLease::close(bool connected)
{
    if (m_channel && connected) {
        ssh_channel_send_eof(m_channel);
        ssh_channel_close(m_channel);
    }
    drop();
}

} // namespace rankdeck
