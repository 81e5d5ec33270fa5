// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/rankoutputpipe.h"

#include <QSocketNotifier>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace rankdeck {

namespace {

// One read's buffer, and the most one drain() takes before it lets the event loop run again (the
// rest is read on the next wake-up): a rank printing as fast as it can must not hold the GUI.
constexpr qsizetype ReadBytes = 64 * 1024;
constexpr qsizetype DrainBytes = 4 * 1024 * 1024;
constexpr qsizetype PauseBelowBytes = 32 * 1024;

} // namespace

RankOutputPipe::RankOutputPipe(int pauseMs, QObject *parent) : QObject(parent)
{
    int fds[2] = {-1, -1};
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        m_error = QString::fromLocal8Bit(std::strerror(errno));
        return;
    }
    m_read = fds[0];
    m_write = fds[1];
    ::fcntl(m_read, F_SETFL, ::fcntl(m_read, F_GETFL) | O_NONBLOCK);
    m_notifier = new QSocketNotifier(qintptr(m_read), QSocketNotifier::Read, this);
    connect(m_notifier, &QSocketNotifier::activated, this, &RankOutputPipe::onReadable);
    m_pause.setSingleShot(true);
    m_pause.setInterval(pauseMs);
    connect(&m_pause, &QTimer::timeout, this, [this] {
        if (m_notifier)
            m_notifier->setEnabled(true);
    });
}

RankOutputPipe::~RankOutputPipe()
{
    closeWriteEnd();
    closeReadEnd();
}

void RankOutputPipe::closeWriteEnd()
{
    if (m_write >= 0)
        ::close(m_write);
    m_write = -1;
}

void RankOutputPipe::closeReadEnd()
{
    if (m_notifier) {
        m_notifier->setEnabled(false);
        m_notifier->deleteLater();
        m_notifier = nullptr;
    }
    if (m_read >= 0)
        ::close(m_read);
    m_read = -1;
}

void RankOutputPipe::onReadable()
{
    // A pipe read half full is a flood: read on at once, or the writer would block on a full
    // pipe (64 KiB) within the pause. A trickle waits.
    if (drain() >= PauseBelowBytes)
        return;
    if (m_notifier && m_pause.interval() > 0) {
        m_notifier->setEnabled(false);
        m_pause.start();
    }
}

qsizetype RankOutputPipe::drain()
{
    QByteArray bytes;
    while (m_read >= 0 && bytes.size() < DrainBytes) {
        const qsizetype had = bytes.size();
        bytes.resize(had + ReadBytes);
        const ssize_t n = ::read(m_read, bytes.data() + had, size_t(ReadBytes));
        bytes.resize(had + qMax<ssize_t>(n, 0));
        if (n > 0)
            continue;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) // EWOULDBLOCK is the same value on Linux
            break;
        closeReadEnd(); // the end of the stream (every writer closed it), or a broken pipe
    }
    if (!bytes.isEmpty())
        emit output(bytes);
    return bytes.size();
}

} // namespace rankdeck
