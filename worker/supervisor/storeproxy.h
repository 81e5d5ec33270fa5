// SPDX-License-Identifier: GPL-3.0-or-later
//
// The rendezvous store's front door on rank 0, open before the program is. A user's program on
// rank 0 serves torch's TCPStore itself, but only once it has imported torch and called
// init_process_group, a second or more after it started; the other ranks, started at the same
// time, get "connection refused" until then and back off (measured here: 0.5–0.7 s lost per
// launch). torchrun avoids it by hosting the store in its agent. The supervisor does it without
// speaking the store's protocol: it listens on the port the other ranks are given (reserved and
// listening before the program starts), accepts them at once and relays their bytes, both ways
// and unchanged, to the program's own store on a second reserved port as soon as that listens.
// Only store traffic goes through it (Gloo and NCCL connect peer to peer); it lives and dies
// with rank 0's supervisor, as the store lives and dies with rank 0.
#pragma once

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace rankdeck::supervisor {

class StoreProxy
{
public:
    StoreProxy() = default;
    ~StoreProxy();
    StoreProxy(const StoreProxy &) = delete;
    StoreProxy &operator=(const StoreProxy &) = delete;

    // Listens on a free port; relays to 127.0.0.1:upstreamPort. Only where the other ranks
    // come in: the address `masterAddress` (MASTER_ADDR) has here when it is one of this host's
    // (with ranks on other nodes only a non-loopback one, which they resolve the same way),
    // else every IPv4 address. At most `maxRelays` connections at once: more are closed as
    // they come (a store has a few per rank; the rest would only cost memory and descriptors).
    // false (errno set) when it cannot listen.
    bool listenFor(int upstreamPort, const std::string &masterAddress, bool allRanksLocal,
                   int maxRelays);
    int port() const { return m_port; }
    // The IPv4 address it listens on (host byte order; 0: every address).
    std::uint32_t address() const { return m_address; }

    // The descriptors to poll and what for; after poll() returns, handle() does what can be
    // done without blocking on every one of them (a handful: one per rank and store client).
    void addPollFds(std::vector<pollfd> &fds) const;
    void handle();
    // How long poll() may sleep: short while a relay waits for the program's store to listen.
    int timeoutMs(int wanted) const;

private:
    struct Relay
    {
        int client = -1;
        int upstream = -1;
        bool connecting = false;  // a non-blocking connect to the store is under way
        bool clientEof = false;   // the rank closed its side
        bool upstreamEof = false; // the store closed its side
        std::string toUpstream;   // bytes from the rank not yet written to the store
        std::string toClient;
        std::chrono::steady_clock::time_point retryAt{};
    };
    void accept();
    void connectUpstream(Relay &r);
    void retryConnects();
    static bool pump(int from, std::string &pending);
    static bool flush(int fd, std::string &pending);
    void closeRelay(Relay &r);

    int m_listen = -1;
    int m_port = 0;
    std::uint32_t m_address = 0;
    size_t m_maxRelays = 64;
    int m_upstreamPort = 0;
    std::vector<Relay> m_relays;
};

} // namespace rankdeck::supervisor
