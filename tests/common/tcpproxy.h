// SPDX-License-Identifier: GPL-3.0-or-later
//
// TcpProxy: a bad network between the launcher and one sshd, for tests and benchmarks. It
// listens on 127.0.0.1 (a free port) and forwards every connection to the target, on a thread of
// its own so that a test blocked in a wait does not stall it. While running it can:
//   - delay every byte by a fixed time in each direction (a round trip of 2 × delayMs), in
//     order, as a long link does (this kernel has no netem);
//   - stall: hold every byte in both directions until released, connections kept open;
//   - throttle: at most bytesPerSec in each direction of each connection;
//   - cut: close every connection at once (the server sees a reset, like a dead link).
// Nothing is ever dropped or reordered while the link is up: a lost or doubled line in a test
// over it is RankDeck's. Settings apply at once, to open connections too.
#pragma once

#include <QString>

#include <atomic>
#include <memory>

class QThread;

class TcpProxyCore;

class TcpProxy
{
public:
    TcpProxy(const QString &targetHost, int targetPort);
    ~TcpProxy();
    TcpProxy(const TcpProxy &) = delete;
    TcpProxy &operator=(const TcpProxy &) = delete;

    bool start(QString *error);
    int port() const { return m_port; }

    void setDelayMs(int ms) { m_settings->delayMs = ms; }
    void setStalled(bool stalled) { m_settings->stalled = stalled; }
    void setBytesPerSec(qint64 rate) { m_settings->bytesPerSec = rate; } // <= 0: no cap
    void cutAll();

    qint64 bytesForwarded() const { return m_settings->forwarded; }
    int connectionCount() const { return m_settings->connections; }

    struct Settings
    {
        std::atomic<int> delayMs{0};
        std::atomic<bool> stalled{false};
        std::atomic<qint64> bytesPerSec{0};
        std::atomic<qint64> forwarded{0};
        std::atomic<int> connections{0};
    };

private:
    QString m_host;
    int m_targetPort;
    int m_port = 0;
    std::shared_ptr<Settings> m_settings;
    std::unique_ptr<QThread> m_thread;
    TcpProxyCore *m_core = nullptr; // lives on m_thread
};
