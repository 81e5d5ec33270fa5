// SPDX-License-Identifier: GPL-3.0-or-later
#include "crash/crashstate.h"

namespace rankdeck::crash::detail {

CrashSettings g_settings;
CrashCapture g_crash;

} // namespace rankdeck::crash::detail
