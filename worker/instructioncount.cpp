// SPDX-License-Identifier: GPL-3.0-or-later
#include "instructioncount.h"

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define RANKDECK_HAVE_CALLGRIND 1
#else
#define RANKDECK_HAVE_CALLGRIND 0
#endif

namespace rankdeck::instructioncount {

bool available()
{
    return RANKDECK_HAVE_CALLGRIND != 0;
}

void start()
{
#if RANKDECK_HAVE_CALLGRIND
    CALLGRIND_START_INSTRUMENTATION;
#endif
}

void stop()
{
#if RANKDECK_HAVE_CALLGRIND
    CALLGRIND_STOP_INSTRUMENTATION;
#endif
}

} // namespace rankdeck::instructioncount
