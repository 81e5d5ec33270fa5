// SPDX-License-Identifier: GPL-3.0-or-later
//
// Which of a rank's output streams a chunk or a line came from. A header of its own so that
// what consumes output (stream/, store/, run/) does not include the Transport interface.
#pragma once

#include <QMetaType>

namespace rankdeck {

enum class StreamKind
{
    Stdout,
    Stderr
};

} // namespace rankdeck

Q_DECLARE_METATYPE(rankdeck::StreamKind)
