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
// Asked for, not required: a bigger pipe lets a burst wait out a pause without blocking its
// writer. Linux grants it up to /proc/sys/fs/pipe-max-size (1 MiB by default) while the user's
// pipes stay under pipe-user-pages-soft; beyond that the pipe keeps its 64 KiB.
constexpr int WantedCapacity = 256 * 1024;

} // namespace

RankOutputPipe::RankOutputPipe(QObject *parent) : QObject(parent)
{
    int fds[2] = {-1, -1};
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        m_error = QString::fromLocal8Bit(std::strerror(errno));
        return;
    }
    m_read = fds[0];
    m_write = fds[1];
    ::fcntl(m_read, F_SETFL, ::fcntl(m_read, F_GETFL) | O_NONBLOCK);
    ::fcntl(m_read, F_SETPIPE_SZ, WantedCapacity);
    const int capacity = ::fcntl(m_read, F_GETPIPE_SZ);
    if (capacity > 0)
        m_capacity = capacity;
    m_notifier = new QSocketNotifier(qintptr(m_read), QSocketNotifier::Read, this);
    connect(m_notifier, &QSocketNotifier::activated, this, &RankOutputPipe::onReadable);
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

void RankOutputPipe::resume()
{
    if (!m_paused)
        return;
    m_paused = false;
    if (m_notifier)
        m_notifier->setEnabled(true);
}

void RankOutputPipe::onReadable()
{
    // Half a pipe or more is a flood: read on at once, or the writer would block on a full pipe
    // within the pause. A trickle waits for the next batch.
    const qsizetype read = drain();
    if (read == 0 || read >= m_capacity / 2 || !m_notifier)
        return;
    m_notifier->setEnabled(false);
    m_paused = true;
    emit paused();
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
