// SPDX-License-Identifier: GPL-3.0-or-later
//
// Reads the rank channels of one node's session on the connection's thread: when the session's
// socket is readable, soon after a blocking call on the session (schedulePoll()), and on a slow
// safety timer, which also sends the session's keepalives. It hands on what the channels bring
// and tells the connection when a channel has ended or the connection is gone; what to do then
// (finish the rank, reconnect) is the connection's business.
#pragma once

#include "transport/ssh/sshrankchannel.h"
#include "transport/transport.h"

#include <QByteArray>
#include <QMap>
#include <QObject>

class QSocketNotifier;
class QTimer;

namespace rankdeck {

class SshLease;
class SshSession;

class SshChannelPump : public QObject
{
    Q_OBJECT
public:
    // channels: the connection's ranks by number; it and session must outlive the pump.
    SshChannelPump(SshSession *session, QMap<int, SshRankChannel> *channels, QObject *parent);

    // No reading while the connection is re-established.
    void setPaused(bool paused);
    // The node's lease, serviced on every poll while there are ranks (it must outlive the pump),
    // and how long nothing may arrive on the session (echoes, rank output) before
    // connectionSilent(); <= 0: never.
    void setLease(SshLease *lease) { m_lease = lease; }
    void setSilenceLimitMs(qint64 ms) { m_silenceLimitMs = ms; }
    // For good (shutdown): the timer and the socket notifier go now, on this thread, because the
    // pump may be destroyed on another one.
    void stop();
    // After the channels or the session changed: the timer runs and the notifier watches the
    // session's socket while there are channels to read.
    void update();
    // Reads the channels soon (after a blocking call that may have buffered their data).
    void schedulePoll();
    // Before the session closes its socket: a notifier must never watch a closed (or reused) fd.
    void dropNotifier();

signals:
    void rankStarted(int rank, qint64 pid);
    void rankOutput(int rank, rankdeck::StreamKind stream, const QByteArray &chunk);
    // The rank's channel reached its end; the connection finishes the rank (and removes it).
    void rankEnded(int rank);
    void connectionLost();
    // Nothing arrived for the silence limit although the node echoes 5 beats a second: a cut
    // link, which TCP itself would not report for many minutes.
    void connectionSilent(qint64 silentMs);

private:
    // fromSocket: woken by the socket notifier (counts idle wake-ups).
    void poll(bool fromSocket);
    // false: the connection is gone
    bool readRank(int rank, SshRankChannel &channel);

    SshSession *m_session;
    QMap<int, SshRankChannel> *m_channels;
    // Data for the ranks arrives on the session's socket; the timer is a slow safety net for
    // data libssh buffered while another call on the session read the socket.
    QSocketNotifier *m_socketNotifier = nullptr;
    int m_notifierFd = -1;
    int m_idleWakeups = 0;
    qint64 m_bytesThisPoll = 0;
    bool m_pollScheduled = false;
    QTimer *m_pollTimer = nullptr;
    SshLease *m_lease = nullptr;
    qint64 m_silenceLimitMs = 0;
    qint64 m_lastHeardMs = 0; // 0: listening starts anew (after a pause, with the first channel)
    bool m_paused = false;
    bool m_stopped = false;
};

} // namespace rankdeck
