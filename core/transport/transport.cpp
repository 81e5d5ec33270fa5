// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/transport.h"

namespace rankdeck {
namespace {
// Queued connections across threads need the value types registered once.
const int s_registered = [] {
    qRegisterMetaType<rankdeck::StreamKind>();
    qRegisterMetaType<rankdeck::RankExit>();
    return 0;
}();
} // namespace
} // namespace rankdeck
