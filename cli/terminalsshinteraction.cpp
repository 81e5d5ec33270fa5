// SPDX-License-Identifier: GPL-3.0-or-later
#include "terminalsshinteraction.h"

#include "cliutil.h"

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

namespace rankdeck::cli {

SshInteraction::HostKeyDecision TerminalSshInteraction::unknownHostKey(const HostKeyQuestion &q)
{
    QMutexLocker lock(&m_mutex);
    const QString where =
        q.port == 22 ? q.address : QStringLiteral("[%1]:%2").arg(q.address).arg(q.port);
    if (m_acceptNew) {
        CliUtil::err() << CliUtil::tr(
                              "rankdeck: accepting new host key of %1 (%2 %3), adding it to %4")
                              .arg(where, q.keyType, q.fingerprint, q.knownHostsFile)
                       << '\n';
        CliUtil::err().flush();
        return HostKeyDecision::AcceptAndRemember;
    }
    CliUtil::err() << CliUtil::tr(
                          "rankdeck: host key of %1 is not known (%2 %3); refusing. "
                          "Check the fingerprint and pass --accept-new-host-keys to trust it.")
                          .arg(where, q.keyType, q.fingerprint)
                   << '\n';
    CliUtil::err().flush();
    return HostKeyDecision::Reject;
}

std::optional<QByteArray> TerminalSshInteraction::passphrase(const QString &host,
                                                             const QString &keyFile)
{
    QMutexLocker lock(&m_mutex);
    return readTty(CliUtil::tr("Passphrase for %1 (connecting to %2): ").arg(keyFile, host), false);
}

std::optional<QByteArray> TerminalSshInteraction::secret(const QString &host, const QString &user,
                                                         const QString &prompt, bool echo)
{
    QMutexLocker lock(&m_mutex);
    return readTty(QStringLiteral("%1@%2 %3").arg(user, host, prompt), echo);
}

std::optional<QByteArray> TerminalSshInteraction::readTty(const QString &prompt, bool echo)
{
    const int fd = ::open("/dev/tty", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return std::nullopt;
    const QByteArray p = prompt.toLocal8Bit();
    if (::write(fd, p.constData(), size_t(p.size())) < 0) {
        ::close(fd);
        return std::nullopt;
    }
    termios old{};
    const bool haveTermios = ::tcgetattr(fd, &old) == 0;
    if (haveTermios && !echo) {
        termios quiet = old;
        quiet.c_lflag &= ~tcflag_t(ECHO);
        ::tcsetattr(fd, TCSAFLUSH, &quiet);
    }
    QByteArray answer;
    char c;
    bool ok = false;
    while (::read(fd, &c, 1) == 1) {
        if (c == '\n') {
            ok = true;
            break;
        }
        answer.append(c);
    }
    if (haveTermios && !echo) {
        ::tcsetattr(fd, TCSAFLUSH, &old);
        (void)::write(fd, "\n", 1);
    }
    ::close(fd);
    if (!ok) {
        answer.fill('\0');
        return std::nullopt;
    }
    return answer;
}

} // namespace rankdeck::cli
