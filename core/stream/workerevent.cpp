// SPDX-License-Identifier: GPL-3.0-or-later
#include "stream/workerevent.h"

#include "util/translation.h"

#include "wire/wireprotocol.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QJsonValue>

#include <array>
#include <cmath>
#include <limits>

namespace rankdeck {

namespace {

struct TypeName
{
    WorkerEvent::Type type;
    std::string_view name;
};

constexpr std::array<TypeName, 15> kTypes{{
    {WorkerEvent::Type::Hello, wire::event::Hello},
    {WorkerEvent::Type::Store, wire::event::Store},
    {WorkerEvent::Type::Rendezvous, wire::event::Rendezvous},
    {WorkerEvent::Type::Step, wire::event::Step},
    {WorkerEvent::Type::Heartbeat, wire::event::Heartbeat},
    {WorkerEvent::Type::Checkpoint, wire::event::Checkpoint},
    {WorkerEvent::Type::Stopping, wire::event::Stopping},
    {WorkerEvent::Type::Finished, wire::event::Finished},
    {WorkerEvent::Type::Error, wire::event::Error},
    {WorkerEvent::Type::Crash, wire::event::Crash},
    {WorkerEvent::Type::Stacks, wire::event::Stacks},
    {WorkerEvent::Type::TfEvents, wire::event::TfEvents},
    {WorkerEvent::Type::FlightRecorder, wire::event::FlightRecorder},
    {WorkerEvent::Type::Samples, wire::event::Samples},
    {WorkerEvent::Type::Profile, wire::event::Profile},
}};

QString key(std::string_view k)
{
    return QString::fromLatin1(k.data(), qsizetype(k.size()));
}

// JSON numbers written by the worker are integers or %.9g doubles; Qt keeps integers exact.
bool integral(const QJsonValue &v, qint64 *out)
{
    if (!v.isDouble())
        return false;
    const double d = v.toDouble();
    if (!std::isfinite(d))
        return false;
    const qint64 i = v.toInteger(std::numeric_limits<qint64>::min());
    if (i == std::numeric_limits<qint64>::min()) {
        if (d != std::floor(d) || std::fabs(d) > 9.2e18)
            return false;
        *out = qint64(d);
        return true;
    }
    *out = i;
    return true;
}

} // namespace

WorkerEvent::Type WorkerEvent::typeFromName(QStringView name)
{
    for (const TypeName &t : kTypes) {
        if (name == QLatin1StringView(t.name.data(), qsizetype(t.name.size())))
            return t.type;
    }
    return Type::Unknown;
}

QString WorkerEvent::typeName(Type type)
{
    for (const TypeName &t : kTypes) {
        if (t.type == type)
            return key(t.name);
    }
    return QStringLiteral("unknown");
}

std::optional<WorkerEvent> WorkerEvent::fromJson(QByteArrayView json, QString *error)
{
    auto fail = [error](const QString &why) -> std::optional<WorkerEvent> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    QJsonParseError perr;
    const QByteArray bytes = json.toByteArray();
    const QJsonDocument doc = QJsonDocument::fromJson(bytes, &perr);
    if (perr.error != QJsonParseError::NoError)
        return fail(tr("invalid JSON at offset %1: %2").arg(perr.offset).arg(perr.errorString()));
    if (!doc.isObject())
        return fail(tr("event payload is not a JSON object"));
    WorkerEvent ev;
    ev.m_fields = doc.object();
    const QJsonValue t = ev.m_fields.value(key(wire::field::Type));
    if (!t.isString())
        return fail(tr("field \"%1\" missing or not a string").arg(key(wire::field::Type)));
    ev.m_type = typeFromName(t.toString());
    if (ev.m_type == Type::Unknown)
        return fail(tr("unknown event type \"%1\"").arg(t.toString().left(64)));
    qint64 ts = 0;
    if (!integral(ev.m_fields.value(key(wire::field::Time)), &ts))
        return fail(tr("field \"%1\" missing or not an integer").arg(key(wire::field::Time)));
    qint64 rank = 0;
    if (!integral(ev.m_fields.value(key(wire::field::Rank)), &rank) || rank < 0 || rank > INT_MAX)
        return fail(tr("field \"%1\" missing or not a rank number").arg(key(wire::field::Rank)));
    ev.m_timeUs = ts;
    ev.m_rank = int(rank);
    ev.m_json = bytes;
    return ev;
}

bool WorkerEvent::has(std::string_view k) const
{
    return m_fields.contains(key(k));
}

QString WorkerEvent::string(std::string_view k, const QString &defaultValue) const
{
    const QJsonValue v = m_fields.value(key(k));
    if (v.isString())
        return v.toString();
    if (v.isDouble())
        return QString::number(v.toDouble(), 'g', 17);
    if (v.isBool())
        return v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    return defaultValue;
}

qint64 WorkerEvent::integer(std::string_view k, qint64 defaultValue) const
{
    const QJsonValue v = m_fields.value(key(k));
    qint64 out = 0;
    if (integral(v, &out))
        return out;
    if (v.isDouble() && std::isfinite(v.toDouble()) && std::fabs(v.toDouble()) < 9.2e18)
        return qint64(v.toDouble());
    if (v.isString()) {
        bool ok = false;
        const qint64 i = v.toString().toLongLong(&ok);
        if (ok)
            return i;
    }
    return defaultValue;
}

std::optional<double> WorkerEvent::wireNumber(const QJsonValue &v)
{
    if (v.isDouble())
        return v.toDouble();
    const QString s = v.toString();
    if (s == QLatin1String("nan"))
        return std::numeric_limits<double>::quiet_NaN();
    if (s == QLatin1String("inf"))
        return std::numeric_limits<double>::infinity();
    if (s == QLatin1String("-inf"))
        return -std::numeric_limits<double>::infinity();
    return std::nullopt;
}

double WorkerEvent::number(std::string_view k, double defaultValue) const
{
    const QJsonValue v = m_fields.value(key(k));
    if (const std::optional<double> d = wireNumber(v))
        return *d;
    if (v.isString()) {
        bool ok = false;
        const double d = v.toString().toDouble(&ok);
        if (ok)
            return d;
    }
    return defaultValue;
}

qint64 WorkerEvent::step() const
{
    return integer(wire::field::Step, -1);
}

double WorkerEvent::loss() const
{
    return number(wire::field::Loss);
}

QString WorkerEvent::message() const
{
    return string(wire::field::Message);
}

QString WorkerEvent::host() const
{
    return string(wire::field::Host);
}

qint64 WorkerEvent::pid() const
{
    return integer(wire::field::Pid, 0);
}

int WorkerEvent::port() const
{
    const qint64 p = integer(wire::field::Port, 0);
    return (p > 0 && p < 65536) ? int(p) : 0;
}

int WorkerEvent::exitCode() const
{
    const qint64 c = integer(wire::field::ExitCode, 1);
    return (c >= INT_MIN && c <= INT_MAX) ? int(c) : 1;
}

QString WorkerEvent::stack() const
{
    return string(wire::field::Stack);
}

} // namespace rankdeck
