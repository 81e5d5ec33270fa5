// SPDX-License-Identifier: GPL-3.0-or-later
//
// Stopping a rank, politely first: `stop` on its control channel (stdin), SIGTERM to its
// process group after stopGraceMs, SIGKILL after termGraceMs more. It remembers which signals it
// sent, so that the failure policy can tell the launcher's kills from a rank's own death.
// Every escalation is cancelled when the rank exits or the attempt starts over, so a timer of an
// old process never reaches a new one. One timer serves every rank (a queue of due steps):
// stopping 512 ranks used to arm 1,024 single-shot timers.
#pragma once

#include "transport/transport.h"

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QTimer>

#include <map>

namespace rankdeck {

class StopEscalation : public QObject
{
    Q_OBJECT
public:
    StopEscalation(int stopGraceMs, int termGraceMs, QObject *parent = nullptr);

    void setTransport(Transport *transport) { m_transport = transport; }
    int stopGraceMs() const { return m_stopGraceMs; }
    int termGraceMs() const { return m_termGraceMs; }

    // `stop`, then SIGTERM, then SIGKILL, each only while the rank has not exited.
    void stop(int rank);
    // A rank that failed by itself and may still be tearing down: SIGKILL if it has not exited
    // after both grace periods, without the `stop` and SIGTERM steps.
    void killIfStillRunningAfterGrace(int rank);
    // SIGKILL now.
    void kill(int rank);

    // The rank's process ended: nothing more is sent to it.
    void rankExited(int rank);
    // A new attempt: every pending step is dropped and no signal counts as sent.
    void reset();

    // Did the launcher send this signal to the rank's current process?
    bool sent(int rank, int signal) const { return m_sent.value(rank).contains(signal); }
    bool sentAny(int rank) const { return !m_sent.value(rank).isEmpty(); }

signals:
    // What it does and why ("rank 1 did not stop within 2000 ms; sending SIGTERM").
    void message(const QString &message);

private:
    enum class Step
    {
        Term,
        Kill,
        KillAfterFailure
    };
    struct Due
    {
        int rank;
        quint64 serial;
        Step step;
    };
    void send(int rank, int signal);
    void schedule(qint64 afterMs, int rank, quint64 serial, Step step);
    void arm();
    void runDue();
    bool current(int rank, quint64 serial) const { return m_serial.value(rank) == serial; }

    QPointer<Transport> m_transport;
    int m_stopGraceMs;
    int m_termGraceMs;
    // Bumped on exit and reset: a pending step fires only while its serial is still current.
    QHash<int, quint64> m_serial;
    quint64 m_nextSerial = 1;
    QHash<int, QSet<int>> m_sent;
    // Steps by due time (ms on m_clock); equal times keep their order of insertion.
    std::multimap<qint64, Due> m_due;
    QElapsedTimer m_clock;
    QTimer m_timer;
};

} // namespace rankdeck
