// SPDX-License-Identifier: GPL-3.0-or-later
//
// A FIFO of the test's own with a reader on the other end, for tests that write into a FIFO as
// a user's `--csv >(gzip)` would: made in the constructor, read on a thread until the writer
// closes it; wait() joins and returns what arrived.
#pragma once

#include <QByteArray>
#include <QString>

#include <fcntl.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace rankdeck::testing {

class FifoReader
{
public:
    explicit FifoReader(const QString &path) : m_path(path)
    {
        m_made = ::mkfifo(path.toLocal8Bit().constData(), 0600) == 0;
        if (!m_made)
            return;
        m_thread = std::thread([this] {
            const int fd = ::open(m_path.toLocal8Bit().constData(), O_RDONLY);
            char buf[65536];
            for (ssize_t n; fd >= 0 && (n = ::read(fd, buf, sizeof buf)) > 0;)
                m_received.append(buf, n);
            if (fd >= 0)
                ::close(fd);
        });
    }
    ~FifoReader()
    {
        if (m_thread.joinable()) {
            // Nobody wrote: open the write end once so the reader sees the end and returns.
            const int fd = ::open(m_path.toLocal8Bit().constData(), O_WRONLY | O_NONBLOCK);
            if (fd >= 0)
                ::close(fd);
            m_thread.join();
        }
    }
    FifoReader(const FifoReader &) = delete;
    FifoReader &operator=(const FifoReader &) = delete;

    bool isValid() const { return m_made; }
    QByteArray wait()
    {
        if (m_thread.joinable())
            m_thread.join();
        return m_received;
    }

private:
    QString m_path;
    bool m_made = false;
    QByteArray m_received;
    std::thread m_thread;
};

} // namespace rankdeck::testing
