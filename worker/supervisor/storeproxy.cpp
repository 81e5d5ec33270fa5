// SPDX-License-Identifier: GPL-3.0-or-later
#include "supervisor/storeproxy.h"

#include "supervisor/portreservation.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace rankdeck::supervisor {

namespace {
using Clock = std::chrono::steady_clock;
constexpr auto kRetry = std::chrono::milliseconds(10);
// A rank that sends faster than the store reads is not read further until it drains.
constexpr size_t kMaxPending = 8u << 20;

void noDelay(int fd)
{
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}
} // namespace

StoreProxy::~StoreProxy()
{
    for (Relay &r : m_relays)
        closeRelay(r);
    if (m_listen >= 0)
        close(m_listen);
}

namespace {

// The IPv4 address `host` has on this machine: resolved, and bindable here. 0 when not.
std::uint32_t localAddressOf(const std::string &host, bool allowLoopback)
{
    if (host.empty())
        return 0;
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *found = nullptr;
    if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || !found)
        return 0;
    const std::uint32_t address =
        ntohl(reinterpret_cast<const sockaddr_in *>(found->ai_addr)->sin_addr.s_addr);
    freeaddrinfo(found);
    if ((address >> 24) == 127 && !allowLoopback)
        return 0;
    // Bindable: one of this host's addresses (another node's would fail with EADDRNOTAVAIL).
    int port = 0;
    const int probe = bindFreePort(0, &port, address);
    if (probe < 0)
        return 0;
    close(probe);
    return address;
}

} // namespace

bool StoreProxy::listenFor(int upstreamPort, const std::string &masterAddress, bool allRanksLocal,
                           int maxRelays)
{
    m_upstreamPort = upstreamPort;
    m_maxRelays = size_t(std::max(1, maxRelays));
    // A rank on another node resolves MASTER_ADDR with its own resolver: a loopback answer here
    // (Debian's 127.0.1.1 for the host name) says nothing of where it connects to.
    m_address = localAddressOf(masterAddress, allRanksLocal);
    m_listen = bindFreePort(SOCK_NONBLOCK, &m_port, m_address);
    if (m_listen < 0)
        return false;
    if (listen(m_listen, 1024) != 0) {
        close(m_listen);
        m_listen = -1;
        m_port = 0;
        return false;
    }
    return true;
}

void StoreProxy::addPollFds(std::vector<pollfd> &fds) const
{
    if (m_listen >= 0)
        fds.push_back({m_listen, POLLIN, 0});
    for (const Relay &r : m_relays) {
        // A side at its end of stream is readable for ever: it is not polled for input.
        short clientEvents = !r.clientEof && r.toUpstream.size() < kMaxPending ? POLLIN : 0;
        if (!r.toClient.empty())
            clientEvents |= POLLOUT;
        fds.push_back({r.client, clientEvents, 0});
        if (r.upstream >= 0) {
            short upEvents = !r.upstreamEof && r.toClient.size() < kMaxPending ? POLLIN : 0;
            if (r.connecting || !r.toUpstream.empty())
                upEvents |= POLLOUT;
            fds.push_back({r.upstream, upEvents, 0});
        }
    }
}

int StoreProxy::timeoutMs(int wanted) const
{
    for (const Relay &r : m_relays)
        if (r.upstream < 0)
            return std::min(wanted, int(kRetry.count()));
    return wanted;
}

void StoreProxy::handle()
{
    accept();
    retryConnects();
    for (Relay &r : m_relays) {
        if (r.client < 0)
            continue;
        if (r.connecting) {
            pollfd p{r.upstream, POLLOUT, 0};
            if (poll(&p, 1, 0) <= 0)
                continue;
            int err = 0;
            socklen_t len = sizeof err;
            getsockopt(r.upstream, SOL_SOCKET, SO_ERROR, &err, &len);
            if (err != 0) {
                // The program's store does not listen yet: try again shortly.
                close(r.upstream);
                r.upstream = -1;
                r.connecting = false;
                r.retryAt = Clock::now() + kRetry;
                continue;
            }
            r.connecting = false;
        }
        // An end of stream on one side closes the relay once what it sent has been passed on
        // (the store's last answer before it closed must still reach the rank).
        if (!r.clientEof && r.toUpstream.size() < kMaxPending && !pump(r.client, r.toUpstream))
            r.clientEof = true;
        if (r.upstream >= 0 && !r.connecting) {
            if (!flush(r.upstream, r.toUpstream))
                r.upstreamEof = r.clientEof = true;
            if (!r.upstreamEof && r.toClient.size() < kMaxPending && !pump(r.upstream, r.toClient))
                r.upstreamEof = true;
        }
        if (!flush(r.client, r.toClient))
            r.clientEof = r.upstreamEof = true;
        if ((r.upstreamEof && r.toClient.empty()) ||
            (r.clientEof && (r.toUpstream.empty() || r.upstreamEof)))
            closeRelay(r);
    }
    m_relays.erase(std::remove_if(m_relays.begin(), m_relays.end(),
                                  [](const Relay &r) { return r.client < 0; }),
                   m_relays.end());
}

void StoreProxy::accept()
{
    if (m_listen < 0)
        return;
    for (;;) {
        const int fd = accept4(m_listen, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        if (m_relays.size() >= m_maxRelays) {
            close(fd); // over the cap: refused, so that the backlog does not fill with them
            continue;
        }
        noDelay(fd);
        Relay r;
        r.client = fd;
        connectUpstream(r);
        m_relays.push_back(std::move(r));
    }
}

void StoreProxy::connectUpstream(Relay &r)
{
    r.upstream = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (r.upstream < 0) {
        r.retryAt = Clock::now() + kRetry;
        return;
    }
    noDelay(r.upstream);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(uint16_t(m_upstreamPort));
    if (connect(r.upstream, reinterpret_cast<const sockaddr *>(&addr), sizeof addr) == 0) {
        r.connecting = false;
    } else if (errno == EINPROGRESS) {
        r.connecting = true;
    } else {
        close(r.upstream);
        r.upstream = -1;
        r.retryAt = Clock::now() + kRetry;
    }
}

void StoreProxy::retryConnects()
{
    const auto now = Clock::now();
    for (Relay &r : m_relays)
        if (r.client >= 0 && r.upstream < 0 && now >= r.retryAt)
            connectUpstream(r);
}

// Reads what `from` has into pending; false when it closed or failed.
bool StoreProxy::pump(int from, std::string &pending)
{
    char buf[65536];
    for (;;) {
        const ssize_t n = read(from, buf, sizeof buf);
        if (n > 0) {
            pending.append(buf, size_t(n));
            if (pending.size() >= kMaxPending)
                return true;
            continue;
        }
        if (n == 0)
            return false;
        return errno == EAGAIN || errno == EINTR;
    }
}

bool StoreProxy::flush(int fd, std::string &pending)
{
    while (!pending.empty()) {
        const ssize_t n = send(fd, pending.data(), pending.size(), MSG_NOSIGNAL);
        if (n > 0) {
            pending.erase(0, size_t(n));
            continue;
        }
        return n < 0 && (errno == EAGAIN || errno == EINTR);
    }
    return true;
}

void StoreProxy::closeRelay(Relay &r)
{
    // Either side gone: the other gets the same end (a rank sees its store connection close).
    if (r.client >= 0)
        close(r.client);
    if (r.upstream >= 0)
        close(r.upstream);
    r.client = r.upstream = -1;
}

} // namespace rankdeck::supervisor
