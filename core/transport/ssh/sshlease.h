// SPDX-License-Identifier: GPL-3.0-or-later
//
// The lease between the launcher and one node while ranks run there: one exec channel
// (SshRankScript::lease) to which the launcher sends a byte five times a second and which echoes
// it. It lets each side tell a dead peer from a quiet one, which a TCP connection alone cannot
// while a link is cut (nothing is reset, both ends just stop hearing):
//   - the node ends the ranks of a run that was not launched detachable once it heard nothing
//     for the orphan grace (a launcher that was SIGKILLed closes its connection, which the
//     keepers see; a cut link is only seen this way);
//   - the launcher takes the connection as lost once nothing at all arrived on it (echoes or
//     rank output) for as long (see SshChannelPump::setSilenceLimitMs).
#pragma once

#include <QString>

struct ssh_channel_struct;

namespace rankdeck {

class SshSession;

class SshLease
{
public:
    explicit SshLease(SshSession *session);
    ~SshLease();
    SshLease(const SshLease &) = delete;
    SshLease &operator=(const SshLease &) = delete;

    // graceSec < 0: the node only echoes (detached runs keep their ranks whatever happens). An
    // open channel on other terms is closed; service() opens the new one.
    void setTerms(const QString &tag, const QString &runDirectory, int graceSec);
    bool isWanted() const { return !m_runDirectory.isEmpty(); }
    QString runDirectory() const { return m_runDirectory; }
    bool isOpen() const { return m_channel != nullptr; }

    // Opens the channel when it is wanted and not open, sends the beat when one is due and reads
    // the echoes. Returns the bytes heard, or -1 when the session is gone.
    qint64 service();
    // Echoes libssh read while another call used the session, not handed on yet.
    bool hasBufferedData() const;
    // The connection is gone: forget the channel without talking to the node.
    void drop();
    // Orderly end (the run ended or the launcher leaves): the node's side ends quietly.
    void close(bool connected);

private:
    bool open();

    SshSession *m_session;
    QString m_tag;
    QString m_runDirectory;
    int m_graceSec = -1;
    ssh_channel_struct *m_channel = nullptr;
    qint64 m_lastBeatMs = 0;
    qint64 m_lastOpenTryMs = 0;
};

} // namespace rankdeck
