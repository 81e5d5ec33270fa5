// SPDX-License-Identifier: GPL-3.0-or-later
//
// Linked into every program of a TSan build (cmake/RankDeckSanitizers.cmake). Qt 6.4 starts every
// QProcess with clone(CLONE_VM | CLONE_VFORK | CLONE_PIDFD) (forkfd's vforkfd). TSan's clone
// interceptor (clang 14 and 16, GCC 12's libtsan) runs its after-fork code in the child, which
// with CLONE_VM writes the parent's own TSan state: clang's runtime then aborts in the parent
// ("CHECK failed: tsan_rtl.cpp:234 ((!thr->slot)) != (0)" in ForkAfter), GCC's goes on with the
// parent marked as a child of a multi-threaded fork (every report after that is lost, and the
// next new thread dies). docs/reliability.md (Sanitizers) has the reproducer.
//
// What TSan does for vfork() itself, done here for its clone() form: drop CLONE_VM, so the child
// gets a copy of the address space and TSan's fork handling is right for it. CLONE_VFORK stays:
// the parent still waits until the child has called exec or exited. Qt's child reports a failed
// exec through a pipe, not through shared memory, so QProcess behaves the same.
// This file defines clone(); the sanitizer runtime's own is a weak alias of __interceptor_clone.
#define _GNU_SOURCE
#include <sched.h>
#include <stdarg.h>
#include <sys/types.h>

int __interceptor_clone(int (*fn)(void *), void *stack, int flags, void *arg, int *parentTid,
                        void *tls, pid_t *childTid);

int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
    va_list rest;
    va_start(rest, arg);
    int *parentTid = va_arg(rest, int *);
    void *tls = va_arg(rest, void *);
    pid_t *childTid = va_arg(rest, pid_t *);
    va_end(rest);
    const int vforkLike = CLONE_VM | CLONE_VFORK;
    if ((flags & vforkLike) == vforkLike && !(flags & CLONE_THREAD))
        flags &= ~CLONE_VM;
    return __interceptor_clone(fn, stack, flags, arg, parentTid, tls, childTid);
}
