// SPDX-License-Identifier: GPL-3.0-or-later
#include "util/nodeclock.h"

#include "util/translation.h"

#include <cstdlib>

namespace rankdeck {

QString NodeClock::describe() const
{
    if (sameClock)
        return tr("+0.000 s (the launcher's clock)");
    if (measuredUs <= 0)
        return error.isEmpty() ? tr("not measured") : tr("not measured (%1)").arg(error);
    // U+2212: a real minus, so that "−5.002 s" does not read as a dash.
    const QString sign = offsetUs < 0 ? QStringLiteral("\u2212") : QStringLiteral("+");
    return tr("%1%2 s ±%3 ms")
        .arg(sign)
        .arg(double(std::llabs(offsetUs)) / 1e6, 0, 'f', 3)
        .arg(double(rttUs) / 2e3, 0, 'f', 1);
}

QJsonObject NodeClock::toJson() const
{
    QJsonObject o;
    o[QStringLiteral("offset_us")] = offsetUs;
    o[QStringLiteral("rtt_us")] = rttUs;
    o[QStringLiteral("measured_us")] = measuredUs;
    if (sameClock)
        o[QStringLiteral("same_clock")] = true;
    if (!error.isEmpty())
        o[QStringLiteral("error")] = error;
    return o;
}

NodeClock NodeClock::fromJson(const QJsonObject &json)
{
    NodeClock c;
    c.offsetUs = json.value(QStringLiteral("offset_us")).toInteger(0);
    c.rttUs = json.value(QStringLiteral("rtt_us")).toInteger(-1);
    c.measuredUs = json.value(QStringLiteral("measured_us")).toInteger(0);
    c.sameClock = json.value(QStringLiteral("same_clock")).toBool(false);
    c.error = json.value(QStringLiteral("error")).toString();
    return c;
}

void ClockOffsetEstimator::addSample(qint64 sentUs, qint64 remoteUs, qint64 receivedUs)
{
    if (receivedUs < sentUs || remoteUs <= 0)
        return;
    ++m_samples;
    const qint64 rtt = receivedUs - sentUs;
    if (m_best.measuredUs > 0 && rtt >= m_best.rttUs)
        return;
    m_best.rttUs = rtt;
    m_best.offsetUs = remoteUs - (sentUs + rtt / 2);
    m_best.measuredUs = receivedUs;
    m_best.error.clear();
}

qint64 parseNodeTimeUs(QByteArrayView answer)
{
    const QByteArray text = answer.trimmed().toByteArray();
    if (text.isEmpty())
        return 0;
    qsizetype digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9')
        ++digits;
    if (digits == 0)
        return 0;
    const QByteArray number = text.left(digits);
    const QByteArray rest = text.mid(digits);
    bool ok = false;
    // Seconds and nanoseconds: 19 digits until 2286.
    if (rest.isEmpty() && digits > 10) {
        const qint64 ns = number.toLongLong(&ok);
        return ok ? ns / 1000 : 0;
    }
    if (rest == "N" || rest == "%N" || rest.isEmpty()) {
        const qint64 s = number.toLongLong(&ok);
        return ok && s < 10'000'000'000LL ? s * 1'000'000 + 500'000 : 0;
    }
    return 0;
}

} // namespace rankdeck
