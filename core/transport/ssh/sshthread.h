// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// The thread an SSH connection (libssh, on OpenSSL) runs on. When its event loop ends it hands
// back what OpenSSL keeps per thread (the thread's random generators, its error queue) before
// QThread says it finished.
//
// Without that, OpenSSL frees a thread's state from a pthread key destructor, which runs after
// QThread::wait() has returned (Qt 6.4 signals the waiter and only then lets the OS thread end).
// A program that exits right after waiting (rankdeck-cli at the end of a run) can then reach
// OpenSSL's atexit cleanup before that destructor: the cleanup deletes the key and frees the
// list of every thread's handlers without calling them, so the ending thread's generators (and
// the provider they hold) are never freed. LeakSanitizer reported it as ~10 kB in libcrypto in
// about one run in three (docs/reliability.md, Sanitizers).

#include <QThread>

namespace rankdeck {

class SshThread : public QThread
{
    Q_OBJECT
public:
    using QThread::QThread;

    // What the thread calls once nothing more of libssh runs on it; public for threads that are
    // not SshThreads (tests).
    static void releaseOpenSslState();

protected:
    void run() override;
};

} // namespace rankdeck
