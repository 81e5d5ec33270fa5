// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/stopescalation.h"

#include <algorithm>
#include <csignal>
#include <vector>

namespace rankdeck {

StopEscalation::StopEscalation(int stopGraceMs, int termGraceMs, QObject *parent)
    : QObject(parent), m_stopGraceMs(stopGraceMs), m_termGraceMs(termGraceMs)
{
    m_clock.start();
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &StopEscalation::runDue);
}

void StopEscalation::stop(int rank)
{
    const quint64 serial = m_serial[rank] = m_nextSerial++;
    if (m_transport)
        m_transport->writeStdin(rank, QByteArray("stop\n"));
    schedule(m_stopGraceMs, rank, serial, Step::Term);
}

void StopEscalation::killIfStillRunningAfterGrace(int rank)
{
    const quint64 serial = m_serial[rank] = m_nextSerial++;
    schedule(m_stopGraceMs + m_termGraceMs, rank, serial, Step::KillAfterFailure);
}

void StopEscalation::schedule(qint64 afterMs, int rank, quint64 serial, Step step)
{
    m_due.emplace(m_clock.elapsed() + afterMs, Due{rank, serial, step});
    arm();
}

void StopEscalation::arm()
{
    if (m_due.empty()) {
        m_timer.stop();
        return;
    }
    const qint64 wait = std::max<qint64>(0, m_due.begin()->first - m_clock.elapsed());
    if (!m_timer.isActive() || m_timer.remainingTime() > wait)
        m_timer.start(int(wait));
}

void StopEscalation::runDue()
{
    const qint64 now = m_clock.elapsed();
    // Take what is due first: a step may queue the next one (SIGTERM, then SIGKILL later).
    std::vector<Due> due;
    while (!m_due.empty() && m_due.begin()->first <= now) {
        due.push_back(m_due.begin()->second);
        m_due.erase(m_due.begin());
    }
    for (const Due &d : due) {
        if (!current(d.rank, d.serial))
            continue;
        switch (d.step) {
        case Step::Term:
            emit message(tr("rank %1 did not stop within %2 ms; sending SIGTERM")
                             .arg(d.rank)
                             .arg(m_stopGraceMs));
            send(d.rank, SIGTERM);
            m_due.emplace(now + m_termGraceMs, Due{d.rank, d.serial, Step::Kill});
            break;
        case Step::Kill:
            emit message(tr("rank %1 ignored SIGTERM for %2 ms; sending SIGKILL")
                             .arg(d.rank)
                             .arg(m_termGraceMs));
            send(d.rank, SIGKILL);
            break;
        case Step::KillAfterFailure:
            emit message(tr("rank %1 did not exit after its failure; killing it").arg(d.rank));
            send(d.rank, SIGKILL);
            break;
        }
    }
    arm();
}

void StopEscalation::kill(int rank)
{
    m_serial[rank] = m_nextSerial++;
    send(rank, SIGKILL);
}

void StopEscalation::rankExited(int rank)
{
    m_serial[rank] = m_nextSerial++;
}

void StopEscalation::reset()
{
    for (auto it = m_serial.begin(); it != m_serial.end(); ++it)
        it.value() = m_nextSerial++;
    m_sent.clear();
    m_due.clear(); // every step left belonged to the old attempt
    m_timer.stop();
}

void StopEscalation::send(int rank, int signal)
{
    m_sent[rank].insert(signal);
    if (m_transport)
        m_transport->signalRank(rank, signal);
}

} // namespace rankdeck
