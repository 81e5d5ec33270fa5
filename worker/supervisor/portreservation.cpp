// SPDX-License-Identifier: GPL-3.0-or-later
#include "supervisor/portreservation.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace rankdeck::supervisor {

PortReservation::~PortReservation()
{
    if (m_fd >= 0)
        close(m_fd);
}

bool PortReservation::reserve()
{
    // Close-on-exec: the program must not inherit it and hold the port after we are gone.
    m_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (m_fd < 0)
        return false;
    const int one = 1;
    setsockopt(m_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    addr.sin_port = 0;
    if (bind(m_fd, reinterpret_cast<const sockaddr *>(&addr), sizeof addr) != 0)
        return false;
    socklen_t len = sizeof addr;
    if (getsockname(m_fd, reinterpret_cast<sockaddr *>(&addr), &len) != 0)
        return false;
    m_port = ntohs(addr.sin_port);
    return m_port > 0;
}

} // namespace rankdeck::supervisor
