// SPDX-License-Identifier: GPL-3.0-or-later
#include "stream/eventparser.h"

#include "util/logging.h"
#include "wire/wireprotocol.h"

#include <QCoreApplication>

namespace rankdeck {

ParsedLine EventParser::parse(QByteArrayView line, int expectedRank)
{
    ParsedLine out;
    const std::string_view view(line.data(), size_t(line.size()));
    // A forged or torn marker may precede a real event in the same line (user output printed
    // without a newline): look past rejected markers.
    size_t offset = 0;
    while (offset < view.size()) {
        const wire::WireEventMatch m = wire::findWireEvent(view.substr(offset));
        if (!m.found)
            break;
        const size_t markerPos = offset + m.markerPos;
        if (!m.valid) {
            out.rejectedEvent = true;
            out.rejectReason = QCoreApplication::translate(
                "rankdeck::EventParser", "event marker with a bad checksum or torn payload");
            offset = markerPos + 1;
            continue;
        }
        QString error;
        std::optional<WorkerEvent> ev =
            WorkerEvent::fromJson(QByteArrayView(m.json.data(), qsizetype(m.json.size())), &error);
        if (!ev) {
            out.rejectedEvent = true;
            out.rejectReason = error;
            offset = markerPos + 1;
            continue;
        }
        if (expectedRank >= 0 && ev->rank() != expectedRank) {
            out.rejectedEvent = true;
            out.rejectReason =
                QCoreApplication::translate("rankdeck::EventParser",
                                            "event claims rank %1 on the stream of rank %2")
                    .arg(ev->rank())
                    .arg(expectedRank);
            offset = markerPos + 1;
            continue;
        }
        out.event = std::move(ev);
        out.text = line.first(qsizetype(markerPos)).toByteArray();
        out.hasText = markerPos > 0;
        return out;
    }
    if (out.rejectedEvent)
        qCDebug(lcStream) << "rank" << expectedRank << "line kept as text:" << out.rejectReason;
    out.text = line.toByteArray();
    out.hasText = true;
    return out;
}

} // namespace rankdeck
