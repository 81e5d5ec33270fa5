// SPDX-License-Identifier: GPL-3.0-or-later
#include "tcpproxy.h"

#include <QElapsedTimer>
#include <QHostAddress>
#include <QList>
#include <QMetaObject>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QThread>
#include <QTimer>

#include <deque>

namespace {

// One direction of one connection: bytes wait here until their time has come.
struct Pipe
{
    QPointer<QTcpSocket> from;
    QPointer<QTcpSocket> to;
    std::deque<std::pair<qint64, QByteArray>> queue; // (due, bytes), in arrival order
    double budget = 0;                               // bytes the throttle allows now
};

} // namespace

class TcpProxyCore : public QObject
{
public:
    TcpProxyCore(QString host, int port, std::shared_ptr<TcpProxy::Settings> settings)
        : m_host(std::move(host)), m_port(port), m_settings(std::move(settings))
    {}

    bool listen(int *port, QString *error)
    {
        m_server = new QTcpServer(this);
        if (!m_server->listen(QHostAddress::LocalHost, 0)) {
            *error = m_server->errorString();
            return false;
        }
        *port = m_server->serverPort();
        connect(m_server, &QTcpServer::newConnection, this, &TcpProxyCore::accept);
        m_timer = new QTimer(this);
        m_timer->setTimerType(Qt::PreciseTimer);
        connect(m_timer, &QTimer::timeout, this, &TcpProxyCore::pump);
        // Runs only while bytes wait for their time: 32 idle proxies waking every 2 ms each
        // would cost the launcher they stand for a core's share on a small machine.
        m_timer->setInterval(2);
        m_clock.start();
        m_lastPump = 0;
        return true;
    }

    void cutAll()
    {
        for (Pipe &p : m_pipes) {
            if (p.from)
                p.from->abort();
            if (p.to)
                p.to->abort();
        }
        m_pipes.clear();
        m_settings->connections = 0;
    }

private:
    void accept()
    {
        while (QTcpSocket *client = m_server->nextPendingConnection()) {
            client->setParent(this);
            auto *server = new QTcpSocket(this);
            server->connectToHost(m_host, quint16(m_port));
            client->setSocketOption(QAbstractSocket::LowDelayOption, 1);
            server->setSocketOption(QAbstractSocket::LowDelayOption, 1);
            m_pipes.append(Pipe{client, server, {}, 0});
            m_pipes.append(Pipe{server, client, {}, 0});
            ++m_settings->connections;
            for (QTcpSocket *s : {client, server}) {
                connect(s, &QTcpSocket::readyRead, this, &TcpProxyCore::readAll);
                // One side gone: the other goes once what is queued for it is out.
                connect(s, &QTcpSocket::disconnected, this, &TcpProxyCore::pump);
                connect(s, &QTcpSocket::connected, this, &TcpProxyCore::pump);
            }
        }
    }

    void readAll()
    {
        const qint64 due = m_clock.elapsed() + m_settings->delayMs;
        bool queued = false;
        for (Pipe &p : m_pipes) {
            if (p.from && p.from->bytesAvailable() > 0)
                p.queue.emplace_back(due, p.from->readAll());
            queued = queued || !p.queue.empty();
        }
        if (queued && !m_timer->isActive()) {
            m_timer->start();
            // Due now (no delay): out at once rather than a timer tick later.
            if (m_settings->delayMs <= 0)
                QTimer::singleShot(0, this, &TcpProxyCore::pump);
        }
    }

    void pump()
    {
        readAll();
        const qint64 now = m_clock.elapsed();
        const double elapsedSec = double(now - m_lastPump) / 1000.0;
        m_lastPump = now;
        const qint64 rate = m_settings->bytesPerSec;
        const bool stalled = m_settings->stalled;
        for (Pipe &p : m_pipes) {
            if (rate > 0)
                p.budget = std::min(p.budget + elapsedSec * double(rate), double(rate) / 10 + 1);
            while (!stalled && !p.queue.empty() && p.queue.front().first <= now && p.to &&
                   p.to->state() == QAbstractSocket::ConnectedState) {
                QByteArray &bytes = p.queue.front().second;
                qsizetype n = bytes.size();
                if (rate > 0)
                    n = std::min<qsizetype>(n, qsizetype(p.budget));
                if (n <= 0)
                    break;
                p.to->write(bytes.constData(), n);
                m_settings->forwarded += n;
                if (rate > 0)
                    p.budget -= double(n);
                if (n == bytes.size())
                    p.queue.pop_front();
                else
                    bytes.remove(0, n);
            }
        }
        bool queued = false;
        for (const Pipe &p : m_pipes)
            queued = queued || !p.queue.empty();
        if (!queued)
            m_timer->stop();
        // A connection whose one side closed ends when nothing is left for the other.
        for (qsizetype i = 0; i + 1 < m_pipes.size(); i += 2) {
            Pipe &a = m_pipes[i];
            Pipe &b = m_pipes[i + 1];
            const bool aGone = !a.from || a.from->state() == QAbstractSocket::UnconnectedState;
            const bool bGone = !b.from || b.from->state() == QAbstractSocket::UnconnectedState;
            if ((aGone && a.queue.empty()) || (bGone && b.queue.empty())) {
                if ((aGone && a.queue.empty()) && b.from)
                    b.from->disconnectFromHost();
                if ((bGone && b.queue.empty()) && a.from)
                    a.from->disconnectFromHost();
                if (aGone && bGone) {
                    if (a.from)
                        a.from->deleteLater();
                    if (b.from)
                        b.from->deleteLater();
                    m_pipes.remove(i, 2);
                    --m_settings->connections;
                    i -= 2;
                }
            }
        }
    }

    QString m_host;
    int m_port;
    std::shared_ptr<TcpProxy::Settings> m_settings;
    QTcpServer *m_server = nullptr;
    QTimer *m_timer = nullptr;
    QElapsedTimer m_clock;
    qint64 m_lastPump = 0;
    QList<Pipe> m_pipes; // pairs: [client→server, server→client]
};

TcpProxy::TcpProxy(const QString &targetHost, int targetPort)
    : m_host(targetHost), m_targetPort(targetPort), m_settings(std::make_shared<Settings>())
{}

TcpProxy::~TcpProxy()
{
    if (!m_thread)
        return;
    QMetaObject::invokeMethod(
        m_core, [core = m_core] { delete core; }, Qt::BlockingQueuedConnection);
    m_thread->quit();
    m_thread->wait();
}

bool TcpProxy::start(QString *error)
{
    m_thread = std::make_unique<QThread>();
    m_thread->setObjectName(QStringLiteral("tcp proxy"));
    m_core = new TcpProxyCore(m_host, m_targetPort, m_settings);
    m_core->moveToThread(m_thread.get());
    m_thread->start();
    bool ok = false;
    QMetaObject::invokeMethod(
        m_core, [&] { ok = m_core->listen(&m_port, error); }, Qt::BlockingQueuedConnection);
    return ok;
}

void TcpProxy::cutAll()
{
    QMetaObject::invokeMethod(
        m_core, [core = m_core] { core->cutAll(); }, Qt::BlockingQueuedConnection);
}
