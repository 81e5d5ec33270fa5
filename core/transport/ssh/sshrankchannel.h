// SPDX-License-Identifier: GPL-3.0-or-later
//
// One rank's exec channel on its node's session, running SshRankScript's wrapper: the header
// line that tells the rank's pid (and, on a re-attach, how much stdin the node has), the bytes of
// both streams received so far, which a re-attach resumes from, and the stdin written so far,
// which a re-attach resends from where the node's log ends. A plain value kept by the node's
// connection, used on its thread only; it frees its libssh channel in finish(), drop() or close(),
// not when it is destroyed.
#pragma once

#include "transport/transport.h"

#include <QByteArray>
#include <QString>

#include <functional>

struct ssh_channel_struct;

namespace rankdeck {

class SshSession;

class SshRankChannel
{
public:
    // Where read() hands what arrived, in the order it arrived.
    struct Sink
    {
        std::function<void(qint64 pid)> started; // once per rank, at its first header
        std::function<void(StreamKind stream, const QByteArray &chunk)> output;
    };

    SshRankChannel() = default;
    // host names the node in messages; session must outlive the channel.
    SshRankChannel(SshSession *session, const QString &host, int rank, const QString &runDirectory,
                   const QString &baseName);

    // Runs command (SshRankScript::start() or attach()) in a new exec channel. attach: stdin
    // resumes once the header tells how much of it the node has.
    bool open(const QByteArray &command, bool attach, QString *error);
    bool isOpen() const { return m_channel != nullptr; }
    // SshRankScript::attach() at the bytes received so far.
    QByteArray attachCommand(const QString &runId, int graceSec) const;
    // For a rank started by an earlier launcher: the bytes of its output already received, and
    // its stdin counted from what the node has at the first header.
    void resumeFrom(qint64 stdoutBytes, qint64 stderrBytes);

    qint64 pid() const { return m_pid; }
    const QString &runDirectory() const { return m_runDirectory; }
    const QString &baseName() const { return m_baseName; }

    // live: the connection is up. Both return whether they sent something on the session (so
    // its socket may hold data for other channels now); what is not sent, a re-attach sends.
    bool writeStdin(const QByteArray &data, bool live);
    bool closeStdin(bool live);
    bool stdinClosed() const { return m_stdinClosed; }
    // Tells the node that stdin ends on purpose, so its keeper does not take the EOF for a lost
    // connection.
    void markStdinClosed();

    // Reads what the channel has (at most kMaxBytesPerRead per stream) and returns the byte
    // count; *lost: the connection is gone.
    qint64 read(const Sink &sink, bool *lost);
    // Data libssh has buffered for this channel already (read() would return it at once).
    bool hasBufferedData() const;
    // The rank's end: the channel reached EOF or was closed by the node.
    bool atEnd() const;
    // After atEnd(): closes and frees the channel; how the rank ended.
    RankExit finish();
    // Frees the channel of a connection that is gone.
    void drop();
    // Closes and frees the channel when the session is still connected; forgets it either way.
    void close(bool connected);

private:
    // The header line: "rankdeck-ssh PID STDIN_BYTES"; false while incomplete. *rest: what
    // followed it on stdout.
    bool takeHeader(const QByteArray &chunk, QByteArray *rest);

    SshSession *m_session = nullptr;
    QString m_host;
    int m_rank = -1;
    QString m_runDirectory;
    QString m_baseName;
    ssh_channel_struct *m_channel = nullptr;
    qint64 m_pid = 0;
    bool m_headerSeen = false;
    bool m_startedReported = false;
    QByteArray m_header;
    QByteArray m_earlyStderr;
    qint64 m_stdoutBytes = 0;
    qint64 m_stderrBytes = 0;
    QByteArray m_stdinHistory; // everything written, so a re-attach can resend what was lost
    bool m_resync = false;     // attach channel: stdin resumes once the header tells where
    // Bytes of stdin the node had before m_stdinHistory began: -1 until the first header of a
    // rank attached from an earlier launcher (whose stdin this launcher never saw).
    qint64 m_stdinBase = 0;
    bool m_stdinClosed = false;
};

} // namespace rankdeck
