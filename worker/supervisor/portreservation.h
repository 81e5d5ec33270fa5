// SPDX-License-Identifier: GPL-3.0-or-later
//
// A rendezvous port for the user's program on rank 0 with no race. The supervisor binds a TCP
// socket to port 0 with SO_REUSEADDR and never listens on it: the kernel picks a free port, and
// while the socket stays bound no other process can bind that port without SO_REUSEADDR, and
// connect() does not hand it out as an ephemeral port. The program's own store (torch's TCPStore
// sets SO_REUSEADDR) may bind it, because a bound socket that is not listening does not conflict
// with another SO_REUSEADDR socket. The supervisor reports the port in a `store` event before it
// starts the program, so the launcher can start the other ranks at once (docs/protocol.md).
#pragma once

#include <cstdint>

namespace rankdeck::supervisor {

// A TCP socket (close-on-exec, SO_REUSEADDR, plus extraFlags such as SOCK_NONBLOCK) bound to a
// port the kernel picked on `address` (IPv4, host byte order; 0: every address), with that port
// in *port; -1 (errno set) when none can be had. PortReservation keeps one unlistened;
// StoreProxy listens on one.
int bindFreePort(int extraFlags, int *port, std::uint32_t address = 0);

class PortReservation
{
public:
    PortReservation() = default;
    ~PortReservation();
    PortReservation(const PortReservation &) = delete;
    PortReservation &operator=(const PortReservation &) = delete;

    // Binds to a free port on every IPv4 address; false (errno set) when no socket can be had.
    bool reserve();
    int port() const { return m_port; }

private:
    int m_fd = -1;
    int m_port = 0;
};

} // namespace rankdeck::supervisor
