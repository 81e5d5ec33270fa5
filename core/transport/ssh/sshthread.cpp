// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/ssh/sshthread.h"

#include <openssl/crypto.h>

namespace rankdeck {

void SshThread::releaseOpenSslState()
{
    OPENSSL_thread_stop();
}

void SshThread::run()
{
    QThread::run();
    // The connection's objects are deleted by their owner on its own thread after wait(), and
    // freeing a libssh session draws no random bytes, so nothing of OpenSSL's comes back here.
    releaseOpenSslState();
}

} // namespace rankdeck
