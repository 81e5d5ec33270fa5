// SPDX-License-Identifier: GPL-3.0-or-later
//
// How far a node's wall clock is from the launcher's. Ranks stamp their events with their own
// clock, and the root cause is the failure that came first by those stamps (FailurePolicy), so a
// node whose clock is 5 s behind would win every race it lost. A transport measures each node
// the way NTP does: the launcher notes when it asked (t0) and when the answer came (t1), the node
// says its time T in between; T − (t0 + t1) / 2 is the offset, off by at most half the round
// trip, so of several round trips the shortest one is kept. Local ranks share the launcher's
// clock: offset 0, exactly.
#pragma once

#include <QJsonObject>
#include <QList>
#include <QMetaType>
#include <QString>

namespace rankdeck {

struct NodeClock
{
    qint64 offsetUs = 0;    // node clock − launcher clock; subtract it from a rank's timestamp
    qint64 rttUs = -1;      // round trip of the sample kept; the offset is good to ±rttUs/2
    qint64 measuredUs = 0;  // launcher time of that sample; 0: never measured
    bool sameClock = false; // the launcher's own clock (local ranks): nothing to measure
    QString error;          // why the last measurement failed; the last good value stays

    bool isKnown() const { return sameClock || measuredUs > 0; }
    // A rank timestamp of this node on the launcher's clock.
    qint64 toLauncherTime(qint64 nodeTimeUs) const
    {
        return nodeTimeUs > 0 && isKnown() ? nodeTimeUs - offsetUs : nodeTimeUs;
    }
    // "+0.000 s (same clock)", "−5.002 s ±0.4 ms", "not measured (why)" for show and the GUI.
    QString describe() const;

    QJsonObject toJson() const;
    static NodeClock fromJson(const QJsonObject &json);
    bool operator==(const NodeClock &) const = default;
};

// The minimum-round-trip estimate over samples of one node.
class ClockOffsetEstimator
{
public:
    // One exchange: the launcher sent at sentUs and got the node's time remoteUs back at
    // receivedUs (all µs since the epoch). Samples with receivedUs < sentUs are ignored.
    void addSample(qint64 sentUs, qint64 remoteUs, qint64 receivedUs);
    int sampleCount() const { return m_samples; }
    // The offset of the shortest round trip; !isKnown() without samples.
    NodeClock estimate() const { return m_best; }

private:
    NodeClock m_best;
    int m_samples = 0;
};

// The node's answer to one probe: `date +%s%N` (GNU), or whole seconds where %N is not known
// (BusyBox prints "N" or "%N"), then in the middle of that second. 0 when it is not a time.
qint64 parseNodeTimeUs(QByteArrayView answer);

} // namespace rankdeck

Q_DECLARE_METATYPE(rankdeck::NodeClock)
