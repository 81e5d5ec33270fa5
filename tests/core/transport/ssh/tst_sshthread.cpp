// SPDX-License-Identifier: GPL-3.0-or-later
//
// SshThread hands back OpenSSL's per-thread state before it reports finished. The race it closes
// (docs/reliability.md, Sanitizers): OpenSSL frees a thread's random generators from a pthread key
// destructor, which runs after QThread::wait() has returned; a program that exits right then
// (rankdeck-cli after a run) can reach OpenSSL's atexit cleanup first, and those generators are
// never freed. Here that window is held open on purpose: a thread_local destructor (they run
// before the key destructors) keeps the thread from ending until OPENSSL_cleanup(), what exit()
// runs, is done; then LeakSanitizer must find nothing. Without LeakSanitizer (a normal build) it
// skips: scripts/sanitize.sh runs it.
#include "transport/ssh/sshthread.h"

#include <QFileInfo>
#include <QSemaphore>
#include <QTest>

#include <libssh/libssh.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RANKDECK_HAS_LSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define RANKDECK_HAS_LSAN 1
#endif
#ifdef RANKDECK_HAS_LSAN
#include <sanitizer/lsan_interface.h>
#endif

using namespace rankdeck;

namespace {

QSemaphore g_holding; // the thread is in its thread_local destructors
QSemaphore g_mayEnd;  // OpenSSL's cleanup is done

struct HoldThreadEnd
{
    ~HoldThreadEnd()
    {
        g_holding.release();
        g_mayEnd.tryAcquire(1, 60000);
    }
};

} // namespace

class TestSshThread : public QObject
{
    Q_OBJECT
private slots:
    void openSslStateIsReleasedBeforeFinished();
};

void TestSshThread::openSslStateIsReleasedBeforeFinished()
{
#ifndef RANKDECK_HAS_LSAN
    QSKIP("needs LeakSanitizer to see OpenSSL's per-thread memory (scripts/sanitize.sh runs it)");
#else
    SshThread thread;
    QObject onThread;
    onThread.moveToThread(&thread);
    thread.start();
    pid_t tid = 0;
    bool used = false;
    QMetaObject::invokeMethod(
        &onThread,
        [&] {
            thread_local HoldThreadEnd hold;
            Q_UNUSED(hold);
            tid = gettid();
            // What a connection draws on its thread: the key exchange's random bytes
            // (ssh_get_random, OpenSSL's public generator) and its ephemeral key (the private one).
            unsigned char bytes[32];
            ssh_key key = nullptr;
            used = RAND_bytes(bytes, sizeof bytes) == 1 &&
                   ssh_pki_generate(SSH_KEYTYPE_ECDSA_P256, 256, &key) == SSH_OK;
            ssh_key_free(key);
        },
        Qt::BlockingQueuedConnection);
    QVERIFY(used);
    QVERIFY(tid > 0);
    thread.quit();
    QVERIFY(thread.wait(60000));
    // wait() has returned; the OS thread is still there, held before its key destructors.
    QVERIFY(g_holding.tryAcquire(1, 60000));
    OPENSSL_cleanup();
    g_mayEnd.release();
    const QString task = QStringLiteral("/proc/self/task/%1").arg(tid);
    QTRY_VERIFY_WITH_TIMEOUT(!QFileInfo::exists(task), 60000);
    // Nonzero (and the report on stderr) when the thread's generators were left to OpenSSL's key
    // destructor, which the cleanup has deleted.
    QCOMPARE(__lsan_do_recoverable_leak_check(), 0);
#endif
}

QTEST_GUILESS_MAIN(TestSshThread)
#include "tst_sshthread.moc"
