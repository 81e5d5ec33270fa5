// SPDX-License-Identifier: GPL-3.0-or-later
#include "util/logging.h"

namespace rankdeck {

Q_LOGGING_CATEGORY(lcConfig, "rankdeck.config", QtWarningMsg)
Q_LOGGING_CATEGORY(lcTransport, "rankdeck.transport", QtWarningMsg)
Q_LOGGING_CATEGORY(lcSsh, "rankdeck.ssh", QtWarningMsg)
Q_LOGGING_CATEGORY(lcStream, "rankdeck.stream", QtWarningMsg)
Q_LOGGING_CATEGORY(lcStore, "rankdeck.store", QtWarningMsg)
Q_LOGGING_CATEGORY(lcRun, "rankdeck.run", QtWarningMsg)

} // namespace rankdeck
