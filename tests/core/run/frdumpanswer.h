// SPDX-License-Identifier: GPL-3.0-or-later
//
// A rank's answer to `dump-flight-recorder <id>` as the launcher receives it: the frdump events
// the supervisor and the worker write (core/wire's own emitFlightRecorderChunks and
// flightRecorderEnd), parsed back into WorkerEvents; and the real dumps of data/fr/.
#pragma once

#include "stream/workerevent.h"
#include "wire/wireprotocol.h"

#include <QFile>
#include <QList>

namespace rankdeck::testing {

inline QByteArray frSample(const QString &name)
{
    QFile f(QStringLiteral(RANKDECK_FR_DATA "/") + name);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("missing test data %s", qPrintable(name));
    return f.readAll();
}

inline WorkerEvent frEvent(const std::string &line)
{
    std::string_view v(line);
    while (!v.empty() && v.back() == '\n')
        v.remove_suffix(1);
    const wire::WireEventMatch m = wire::findWireEvent(v);
    const auto e = WorkerEvent::fromJson(QByteArrayView(m.json.data(), qsizetype(m.json.size())));
    if (!m.valid || !e)
        qFatal("an frdump event that does not parse: %s", line.c_str());
    return *e;
}

// Chunks of `json` and `pickle` (either may be empty), then the end event with `why`.
inline QList<WorkerEvent> frAnswer(int rank, qint64 id, const QByteArray &json,
                                   const QByteArray &pickle = {}, const QString &why = {})
{
    QList<WorkerEvent> out;
    auto take = [&](const std::string &line) { out << frEvent(line); };
    if (!json.isEmpty())
        wire::emitFlightRecorderChunks(rank, id, wire::kFlightRecorderJson,
                                       std::string_view(json.constData(), size_t(json.size())), 1,
                                       take);
    if (!pickle.isEmpty())
        wire::emitFlightRecorderChunks(rank, id, wire::kFlightRecorderPickle,
                                       std::string_view(pickle.constData(), size_t(pickle.size())),
                                       1, take);
    const QByteArray reason = why.toUtf8();
    out << frEvent(wire::flightRecorderEnd(
        rank, id, std::string_view(reason.constData(), size_t(reason.size())), 1));
    return out;
}

} // namespace rankdeck::testing
