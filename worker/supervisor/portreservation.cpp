// SPDX-License-Identifier: GPL-3.0-or-later
#include "supervisor/portreservation.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace rankdeck::supervisor {

PortReservation::~PortReservation()
{
    if (m_fd >= 0)
        close(m_fd);
}

int bindFreePort(int extraFlags, int *port, std::uint32_t address)
{
    // Close-on-exec: the program must not inherit it and hold the port after we are gone.
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | extraFlags, 0);
    if (fd < 0)
        return -1;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(address);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (bind(fd, reinterpret_cast<const sockaddr *>(&addr), sizeof addr) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len) != 0 || addr.sin_port == 0) {
        const int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    *port = ntohs(addr.sin_port);
    return fd;
}

bool PortReservation::reserve()
{
    m_fd = bindFreePort(0, &m_port);
    return m_fd >= 0;
}

} // namespace rankdeck::supervisor
