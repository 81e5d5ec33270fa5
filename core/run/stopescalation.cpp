// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/stopescalation.h"

#include <QTimer>

#include <csignal>

namespace rankdeck {

StopEscalation::StopEscalation(int stopGraceMs, int termGraceMs, QObject *parent)
    : QObject(parent), m_stopGraceMs(stopGraceMs), m_termGraceMs(termGraceMs)
{}

void StopEscalation::stop(int rank)
{
    const quint64 serial = m_serial[rank] = m_nextSerial++;
    if (m_transport)
        m_transport->writeStdin(rank, QByteArray("stop\n"));
    QTimer::singleShot(m_stopGraceMs, this, [this, rank, serial] {
        if (!current(rank, serial))
            return;
        emit message(
            tr("rank %1 did not stop within %2 ms; sending SIGTERM").arg(rank).arg(m_stopGraceMs));
        send(rank, SIGTERM);
        QTimer::singleShot(m_termGraceMs, this, [this, rank, serial] {
            if (!current(rank, serial))
                return;
            emit message(tr("rank %1 ignored SIGTERM for %2 ms; sending SIGKILL")
                             .arg(rank)
                             .arg(m_termGraceMs));
            send(rank, SIGKILL);
        });
    });
}

void StopEscalation::killIfStillRunningAfterGrace(int rank)
{
    const quint64 serial = m_serial[rank] = m_nextSerial++;
    QTimer::singleShot(m_stopGraceMs + m_termGraceMs, this, [this, rank, serial] {
        if (!current(rank, serial))
            return;
        emit message(tr("rank %1 did not exit after its failure; killing it").arg(rank));
        send(rank, SIGKILL);
    });
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
}

void StopEscalation::send(int rank, int signal)
{
    m_sent[rank].insert(signal);
    if (m_transport)
        m_transport->signalRank(rank, signal);
}

} // namespace rankdeck
