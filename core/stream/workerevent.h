// SPDX-License-Identifier: GPL-3.0-or-later
//
// One structured event a worker sent (docs/protocol.md), as a value type that is cheap to copy
// across threads. Accessors never fail: a missing or mistyped field gives the default, so a
// newer or buggy worker cannot crash the launcher.
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QMetaType>
#include <QString>

#include <optional>
#include <string_view>

namespace rankdeck {

class WorkerEvent
{
public:
    enum class Type
    {
        Unknown,
        Hello,
        Store,
        Rendezvous,
        Step,
        Heartbeat,
        Checkpoint,
        Stopping,
        Finished,
        Error,
        Crash,
        Stacks,
        TfEvents,       // bytes of a TensorBoard event file (rankdeck-supervisor)
        FlightRecorder, // a chunk (or the end) of a flight-recorder dump (frdump)
        Samples,        // a window of a supervised rank's sampled stacks and /proc counters
        Profile,        // a chunk (or the end) of a recorded profile
    };

    WorkerEvent() = default;

    // Parses a CRC-checked JSON payload. Fails (nullopt, *error says why) when it is not an
    // object, lacks "t", "ts" or "rank", or names an event type this launcher does not know
    // (such lines stay log lines, as the protocol promises).
    static std::optional<WorkerEvent> fromJson(QByteArrayView json, QString *error = nullptr);

    static Type typeFromName(QStringView name);
    static QString typeName(Type type);

    bool isValid() const { return m_type != Type::Unknown; }
    Type type() const { return m_type; }
    QString typeName() const { return typeName(m_type); }
    qint64 timeUs() const { return m_timeUs; }
    int rank() const { return m_rank; }
    const QJsonObject &fields() const { return m_fields; }
    // The payload exactly as received (for the run record).
    const QByteArray &json() const { return m_json; }

    bool has(std::string_view key) const;
    QString string(std::string_view key, const QString &defaultValue = {}) const;
    qint64 integer(std::string_view key, qint64 defaultValue = 0) const;
    // Numbers, with the protocol's "nan", "inf" and "-inf" strings mapped back.
    double number(std::string_view key, double defaultValue = qQNaN()) const;
    // A wire number: a JSON number, or "nan", "inf", "-inf" (what JSON cannot hold).
    static std::optional<double> wireNumber(const QJsonValue &value);

    // Typed shortcuts for the fields most users need.
    qint64 step() const;     // step, heartbeat, checkpoint, finished; -1 if absent
    double loss() const;     // NaN if absent
    QString message() const; // error, crash
    QString host() const;    // hello
    qint64 pid() const;      // hello; 0 if absent
    int port() const;        // store; 0 if absent
    int exitCode() const;    // error; 1 if absent
    QString stack() const;   // crash, stacks

private:
    Type m_type = Type::Unknown;
    qint64 m_timeUs = 0;
    int m_rank = -1;
    QJsonObject m_fields;
    QByteArray m_json;
};

} // namespace rankdeck

Q_DECLARE_METATYPE(rankdeck::WorkerEvent)
