// SPDX-License-Identifier: GPL-3.0-or-later
//
// One logging category per stage of the pipeline. Tracing is off by default and turned on per
// area without rebuilding, e.g.
//   QT_LOGGING_RULES="rankdeck.ssh.debug=true"           every SSH connect, channel and resume
//   QT_LOGGING_RULES="rankdeck.stream.debug=true"        every rejected or malformed event line
//   QT_LOGGING_RULES="rankdeck.*.debug=true"             everything
// Warnings of every category are on.
#pragma once

#include <QLoggingCategory>

namespace rankdeck {

Q_DECLARE_LOGGING_CATEGORY(lcConfig)
Q_DECLARE_LOGGING_CATEGORY(lcTransport)
Q_DECLARE_LOGGING_CATEGORY(lcSsh)
Q_DECLARE_LOGGING_CATEGORY(lcStream)
Q_DECLARE_LOGGING_CATEGORY(lcStore)
Q_DECLARE_LOGGING_CATEGORY(lcRun)

} // namespace rankdeck
