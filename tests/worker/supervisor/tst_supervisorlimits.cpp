// SPDX-License-Identifier: GPL-3.0-or-later
//
// What the supervisor opens to others and walks through, bounded (issue 29, problem 7):
//   - rank 0's store proxy listens only where the other ranks connect (MASTER_ADDR; all ranks on
//     this node: its loopback address, not every interface), and keeps at most max(64, 4 ×
//     WORLD_SIZE) connections, closing the rest as they come;
//   - the process-tree walks (processtree.cpp and the warm server's _warmstart.py) visit each
//     pid once, so a cycle that pid reuse leaves in a /proc snapshot cannot loop them forever.
#include "supervisor/processtree.h"
#include "wire/wireprotocol.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <thread>

using namespace Qt::StringLiterals;
using namespace rankdeck::supervisor;

namespace {

QString python()
{
    return qEnvironmentVariable("RANKDECK_TORCH_PYTHON", u"python3"_s);
}

// A blocking TCP connect to address:port; the socket, or -1.
int connectTo(const char *address, int port)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(uint16_t(port));
    ::inet_pton(AF_INET, address, &a.sin_addr);
    if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr *>(&a), sizeof a) != 0) {
        if (fd >= 0)
            ::close(fd);
        return -1;
    }
    return fd;
}

// Whether the peer closed fd (a read sees the end), waiting at most ms.
bool closedByPeer(int fd, int ms)
{
    timeval tv{ms / 1000, (ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char c;
    return ::recv(fd, &c, 1, 0) == 0;
}

} // namespace

class TestSupervisorLimits : public QObject
{
    Q_OBJECT

private slots:
    void storeProxyIsBoundAndCapped()
    {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const auto &[k, v] : {std::pair{u"RANK"_s, u"0"_s},
                                   {u"WORLD_SIZE"_s, u"1"_s},
                                   {u"LOCAL_WORLD_SIZE"_s, u"1"_s},
                                   {u"MASTER_ADDR"_s, u"127.0.0.1"_s}})
            env.insert(k, v);
        env.remove(u"MASTER_PORT"_s);
        env.remove(u"RANKDECK_NO_STORE_PROXY"_s);
        p.setProcessEnvironment(env);
        QTemporaryDir runDir;
        p.start(qEnvironmentVariable("RANKDECK_BIN_DIR") + u"/rankdeck-supervisor"_s,
                {u"--control-stdin"_s, u"--run-dir"_s, runDir.path(), u"--"_s, python(), u"-c"_s,
                 u"import time; time.sleep(120)"_s});
        int port = 0;
        QByteArray out;
        QElapsedTimer t;
        t.start();
        while (port == 0 && t.elapsed() < 30000 && p.state() != QProcess::NotRunning) {
            p.waitForReadyRead(100);
            out += p.readAllStandardOutput();
            for (const QByteArray &line : out.split('\n')) {
                const auto m = rankdeck::wire::findWireEvent(
                    std::string_view(line.constData(), size_t(line.size())));
                const QJsonObject e = m.valid
                                          ? QJsonDocument::fromJson(
                                                QByteArray(m.json.data(), qsizetype(m.json.size())))
                                                .object()
                                          : QJsonObject();
                if (e.value(u"t"_s).toString() == u"store"_s)
                    port = e.value(u"port"_s).toInt();
            }
        }
        QVERIFY2(port > 0, out.constData());

        // Another local address than the ranks': nobody is listening there.
        const int elsewhere = connectTo("127.0.0.2", port);
        if (elsewhere >= 0)
            ::close(elsewhere);
        QVERIFY2(elsewhere < 0, "the store proxy listens on 127.0.0.2 too");

        // 100 connections for a world of 1: the first 64 are relayed, the others closed.
        QList<int> fds;
        for (int i = 0; i < 100; ++i) {
            const int fd = connectTo("127.0.0.1", port);
            QVERIFY(fd >= 0);
            fds << fd;
        }
        // The closed ones are closed as they are accepted; 20 s in all for them to show.
        int closed = 0;
        QElapsedTimer waited;
        waited.start();
        for (int i = 64; i < fds.size(); ++i)
            closed += closedByPeer(fds[i], int(qMax<qint64>(1, 20000 - waited.elapsed()))) ? 1 : 0;
        int open = 0;
        for (int i = 0; i < 64; ++i)
            open += closedByPeer(fds[i], 50) ? 0 : 1;
        for (int fd : fds)
            ::close(fd);
        p.closeWriteChannel(); // the launcher is gone: the supervisor stops the program
        if (!p.waitForFinished(20000))
            p.kill();
        QCOMPARE(closed, 36);
        QCOMPARE(open, 64);
    }

    void processWalkEndsOnACycle()
    {
        // 10 -> 11 -> 12 -> 11 (pid 11 read as the child of its own child) and 12 -> 13.
        const std::unordered_multimap<pid_t, pid_t> children{
            {10, 11}, {11, 12}, {12, 11}, {12, 13}};
        auto walk = std::async(std::launch::async, [&] { return descendantsIn(children, 10); });
        if (walk.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
            qCritical("descendantsIn loops on a cycle");
            std::quick_exit(1); // the looping thread cannot be stopped
        }
        QCOMPARE(walk.get(), (std::vector<pid_t>{11, 12, 13}));
    }

    void warmServerWalkEndsOnACycle()
    {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"PYTHONPATH"_s, QStringLiteral(RANKDECK_PYTHON_DIR));
        p.setProcessEnvironment(env);
        p.start(python(), {u"-c"_s, u"from rankdeck import _warmstart as w\n"
                                    "print(sorted(w._descendants(10, {10: [11], 11: [12], "
                                    "12: [11, 13]})))"_s});
        const bool ended = p.waitForFinished(20000);
        if (!ended)
            p.kill();
        QVERIFY2(ended, "_descendants loops on a cycle");
        QCOMPARE(p.readAllStandardOutput().trimmed(), QByteArray("[11, 12, 13]"));
    }
};

QTEST_GUILESS_MAIN(TestSupervisorLimits)
#include "tst_supervisorlimits.moc"
