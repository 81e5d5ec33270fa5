// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/ssh/sshchannelpump.h"

#include "transport/ssh/sshlease.h"
#include "transport/ssh/sshsession.h"

#include <QDateTime>

#include <QList>
#include <QSocketNotifier>
#include <QTimer>

#include <libssh/libssh.h>

namespace rankdeck {

namespace {

// The ranks' channels are read when the session's socket is readable; this slow timer only
// catches data libssh buffered while another call on the session (a signal, a stdin write) read
// the socket, should no schedulePoll() have followed it.
constexpr int kSafetyPollIntervalMs = 250;
// Wake-ups by the socket notifier that found nothing to read, in a row, before it rests until
// the next timer tick: a guard against spinning on a socket libssh does not drain.
constexpr int kMaxIdleWakeups = 16;

} // namespace

SshChannelPump::SshChannelPump(SshSession *session, QMap<int, SshRankChannel> *channels,
                               QObject *parent)
    : QObject(parent), m_session(session), m_channels(channels)
{}

void SshChannelPump::setPaused(bool paused)
{
    m_paused = paused;
    m_lastHeardMs = 0;
}

void SshChannelPump::stop()
{
    m_stopped = true;
    dropNotifier();
    delete m_pollTimer;
    m_pollTimer = nullptr;
}

void SshChannelPump::dropNotifier()
{
    delete m_socketNotifier;
    m_socketNotifier = nullptr;
    m_notifierFd = -1;
}

void SshChannelPump::update()
{
    if (m_stopped)
        return;
    if (!m_pollTimer) {
        m_pollTimer = new QTimer(this);
        m_pollTimer->setInterval(kSafetyPollIntervalMs);
        connect(m_pollTimer, &QTimer::timeout, this, [this] { poll(false); });
    }
    const bool active = !m_channels->isEmpty() && !m_paused;
    ssh_session s = m_session->handle();
    const int fd = active && s ? int(ssh_get_fd(s)) : -1;
    if (m_socketNotifier && fd != m_notifierFd)
        dropNotifier();
    if (fd >= 0 && !m_socketNotifier) {
        m_socketNotifier = new QSocketNotifier(qintptr(fd), QSocketNotifier::Read, this);
        m_notifierFd = fd;
        m_idleWakeups = 0;
        connect(m_socketNotifier, &QSocketNotifier::activated, this, [this] { poll(true); });
    }
    if (active && !m_pollTimer->isActive())
        m_pollTimer->start();
    else if (!active && m_pollTimer->isActive())
        m_pollTimer->stop();
    if (!active)
        m_lastHeardMs = 0;
}

void SshChannelPump::schedulePoll()
{
    if (!m_pollScheduled && !m_channels->isEmpty()) {
        m_pollScheduled = true;
        QTimer::singleShot(0, this, [this] {
            m_pollScheduled = false;
            poll(false);
        });
    }
}

void SshChannelPump::poll(bool fromSocket)
{
    if (m_stopped || m_paused)
        return;
    m_bytesThisPoll = 0;
    // Reading one channel reads the socket, which may bring data for a channel already read in
    // this pass; the socket is drained then and would not wake us for it. So passes repeat while
    // any channel has data buffered (a bounded number of times; then soon again).
    bool buffered = true;
    for (int pass = 0; buffered && pass < 8; ++pass) {
        buffered = false;
        const QList<int> ranks = m_channels->keys();
        for (int rank : ranks) {
            auto it = m_channels->find(rank);
            if (it == m_channels->end() || !it->isOpen())
                continue;
            if (!readRank(rank, *it)) {
                emit connectionLost();
                return;
            }
        }
        for (auto it = m_channels->cbegin(); it != m_channels->cend() && !buffered; ++it)
            buffered = it->hasBufferedData();
    }
    if (buffered)
        schedulePoll();
    if (m_lease && !m_channels->isEmpty()) {
        const qint64 heard = m_lease->service();
        if (heard < 0) {
            emit connectionLost();
            return;
        }
        m_bytesThisPoll += heard;
    }
    // A blocking call on the session (opening the lease, a clock probe, a signal) reads what
    // arrives meanwhile into libssh's buffers: that was heard too, however long the call took.
    bool waiting = m_lease && m_lease->hasBufferedData();
    for (auto it = m_channels->cbegin(); it != m_channels->cend() && !waiting; ++it)
        waiting = it->hasBufferedData();
    if (waiting)
        schedulePoll();
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    if (m_bytesThisPoll > 0 || m_lastHeardMs == 0 || waiting)
        m_lastHeardMs = now;
    else if (m_silenceLimitMs > 0 && m_lease && m_lease->isOpen() &&
             now - m_lastHeardMs > m_silenceLimitMs) {
        emit connectionSilent(now - m_lastHeardMs);
        return;
    }
    // NAT gateways forget silent connections (a rank that prints nothing for minutes).
    if (!fromSocket && !m_session->keepAlive()) {
        emit connectionLost();
        return;
    }
    if (m_bytesThisPoll > 0 || !fromSocket)
        m_idleWakeups = 0;
    else
        ++m_idleWakeups;
    if (m_socketNotifier)
        m_socketNotifier->setEnabled(m_idleWakeups < kMaxIdleWakeups);
    update();
}

bool SshChannelPump::readRank(int rank, SshRankChannel &channel)
{
    const SshRankChannel::Sink sink{[this, rank](qint64 pid) { emit rankStarted(rank, pid); },
                                    [this, rank](StreamKind stream, const QByteArray &chunk) {
                                        emit rankOutput(rank, stream, chunk);
                                    }};
    bool lost = false;
    m_bytesThisPoll += channel.read(sink, &lost);
    if (lost || !m_session->isConnected())
        return false;
    if (channel.atEnd())
        emit rankEnded(rank);
    return true;
}

} // namespace rankdeck
