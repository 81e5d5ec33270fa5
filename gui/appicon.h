// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QIcon>

namespace rankdeck {

// The application icon (the same design as resources/rankdeck.svg), painted at runtime so that
// no SVG image plugin is needed.
QIcon appIcon();

} // namespace rankdeck
