// SPDX-License-Identifier: GPL-3.0-or-later
//
// Splits one line into log text and/or a worker event, using the shared wire header
// (core/wire/wireprotocol.h). A line is an event only when the marker is present, the CRC
// matches, the JSON is a known event and (when the caller knows which rank it listens to) the
// event names that rank; anything else is log text, shown as it came.
#pragma once

#include "stream/workerevent.h"

#include <QByteArray>
#include <QByteArrayView>

#include <optional>

namespace rankdeck {

struct ParsedLine
{
    // Log text of the line: all of it, or what preceded the event marker. May be empty.
    QByteArray text;
    // True when `text` is a line to show (false only when the line was nothing but an event).
    bool hasText = true;
    std::optional<WorkerEvent> event;
    // A marker was present but the event was rejected (torn, forged, unknown, wrong rank).
    bool rejectedEvent = false;
    QString rejectReason;
};

class EventParser
{
public:
    // expectedRank < 0 accepts any rank.
    static ParsedLine parse(QByteArrayView line, int expectedRank = -1);
};

} // namespace rankdeck
