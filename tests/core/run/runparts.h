// SPDX-License-Identifier: GPL-3.0-or-later
//
// What the unit tests of RunController's parts share: worker events built from real wire lines,
// and a Transport that only records what it is asked to do.
#pragma once

#include "record/runstate.h"
#include "stream/eventparser.h"
#include "stream/workerevent.h"
#include "transport/transport.h"
#include "wire/wireprotocol.h"

#include <QByteArray>
#include <QList>
#include <QMetaType>
#include <QString>

#include <string>

namespace rankdeck::testing {

// The event a worker line written by `writer` carries, parsed the way a rank's stream parses it;
// an invalid event (type Unknown) when the line is rejected.
inline WorkerEvent wireEvent(const wire::WireEventWriter &writer)
{
    std::string line = writer.line();
    line.pop_back(); // the newline: the splitter hands out lines without it
    const ParsedLine parsed =
        EventParser::parse(QByteArrayView(line.data(), qsizetype(line.size())));
    return parsed.event ? *parsed.event : WorkerEvent();
}

// Records writeStdin, signalRank and attachRank calls; everything else does nothing.
class RecordingTransport : public Transport
{
public:
    struct Signal
    {
        int rank;
        int signal;
        bool operator==(const Signal &) const = default;
    };
    struct Attach
    {
        RankLaunchSpec spec;
        int attempt;
        qint64 stdoutBytes;
        qint64 stderrBytes;
    };

    using Transport::Transport;

    Capabilities capabilities() const override { return Capability::Detach | Capability::Reattach; }
    QString describe() const override { return QStringLiteral("recording"); }
    void prepare(const QString &) override {}
    QString workerPath(int) const override { return {}; }
    void startRank(const RankLaunchSpec &) override {}
    void writeStdin(int rank, const QByteArray &data) override { stdinWrites.append({rank, data}); }
    void closeStdin(int) override {}
    void signalRank(int rank, int signal) override { sentSignals.append({rank, signal}); }
    void attachRank(const RankLaunchSpec &spec, int attempt, qint64 stdoutBytes,
                    qint64 stderrBytes) override
    {
        attaches.append({spec, attempt, stdoutBytes, stderrBytes});
    }

    QList<QPair<int, QByteArray>> stdinWrites;
    QList<Signal> sentSignals;
    QList<Attach> attaches;
};

} // namespace rankdeck::testing

Q_DECLARE_METATYPE(rankdeck::RankState)
