// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/ssh/sshclockprobe.h"

#include "util/clock.h"
#include "util/logging.h"
#include "util/translation.h"

#include "transport/ssh/sshsession.h"

#include <QDeadlineTimer>

#include <libssh/libssh.h>

namespace rankdeck {

namespace {

// Reads one line from the channel's stdout by the deadline; empty on EOF, error or timeout.
QByteArray readLine(ssh_channel channel, QByteArray &buffer, const QDeadlineTimer &deadline)
{
    for (;;) {
        const qsizetype nl = buffer.indexOf('\n');
        if (nl >= 0) {
            QByteArray line = buffer.left(nl);
            buffer.remove(0, nl + 1);
            return line;
        }
        if (deadline.hasExpired() || ssh_channel_is_eof(channel) || buffer.size() > 4096)
            return {};
        char chunk[256];
        const int n =
            ssh_channel_read_timeout(channel, chunk, sizeof chunk, 0,
                                     int(qBound(qint64(1), deadline.remainingTime(), qint64(200))));
        if (n == SSH_ERROR)
            return {};
        if (n > 0)
            buffer.append(chunk, n);
    }
}

} // namespace

bool SshClockProbe::measure(SshSession *session, int samples, int timeoutMs, NodeClock *clock)
{
    ssh_session handle = session->handle();
    if (!session->isConnected() || !handle) {
        clock->error = tr("not connected");
        return false;
    }
    ssh_channel channel = ssh_channel_new(handle);
    // `read` with a timeout of its own would not be POSIX; the launcher closes stdin instead.
    if (!channel || ssh_channel_open_session(channel) != SSH_OK ||
        ssh_channel_request_exec(channel, "while read -r _; do date +%s%N || exit 1; done") !=
            SSH_OK) {
        clock->error =
            tr("cannot run date on the node: %1").arg(QString::fromUtf8(ssh_get_error(handle)));
        if (channel)
            ssh_channel_free(channel);
        return false;
    }
    ClockOffsetEstimator estimator;
    QByteArray buffer;
    const QDeadlineTimer deadline(timeoutMs);
    QString failure;
    for (int i = 0; i < samples; ++i) {
        const qint64 sent = nowUs();
        if (ssh_channel_write(channel, "\n", 1) != 1) {
            failure = tr("the node's clock could not be asked");
            break;
        }
        const QByteArray answer = readLine(channel, buffer, deadline);
        const qint64 received = nowUs();
        const qint64 remote = parseNodeTimeUs(answer);
        if (remote <= 0) {
            failure = answer.isEmpty()
                          ? tr("no answer from date on the node within %1 ms").arg(timeoutMs)
                          : tr("date on the node printed \"%1\", not a time")
                                .arg(QString::fromUtf8(answer.left(80)));
            break;
        }
        estimator.addSample(sent, remote, received);
    }
    ssh_channel_send_eof(channel);
    ssh_channel_close(channel);
    ssh_channel_free(channel);
    if (estimator.sampleCount() == 0) {
        clock->error = failure;
        return false;
    }
    *clock = estimator.estimate();
    qCDebug(lcSsh) << session->endpoint().host << "clock offset" << clock->offsetUs << "us, rtt"
                   << clock->rttUs << "us," << estimator.sampleCount() << "samples";
    return true;
}

} // namespace rankdeck
