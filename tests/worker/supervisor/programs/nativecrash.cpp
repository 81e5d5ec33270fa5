// SPDX-License-Identifier: GPL-3.0-or-later
// A native program that dies by SIGSEGV in a function with a known name, file and line
// (built with -g): the supervisor's stack must name it and point own_frame at it.
#include <cstdio>
#include <ctime>

namespace victim {

void writeThroughNull(volatile int *p);
void crashHere(int depth);

__attribute__((noinline)) void writeThroughNull(volatile int *p)
{
    *p = 42; // the faulting line
}

__attribute__((noinline)) void crashHere(int depth)
{
    if (depth > 0)
        crashHere(depth - 1);
    else
        writeThroughNull(nullptr);
}

} // namespace victim

int main()
{
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    std::printf("fault-at-ns %lld\n",
                static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec);
    std::fflush(stdout);
    victim::crashHere(2);
    return 0;
}
