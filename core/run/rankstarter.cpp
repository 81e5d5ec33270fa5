// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/rankstarter.h"

#include "run/runactions.h"
#include "run/rundata.h"

#include <QElapsedTimer>
#include <QTimer>

namespace rankdeck {

RankStarter::RankStarter(RunData &run, RunActions &actions) : m_run(run), m_actions(actions) {}

void RankStarter::startOthers(int masterPort)
{
    const bool pending = busy();
    m_next = 1;
    m_masterPort = masterPort;
    m_attempt = m_run.attempt;
    if (!pending)
        startSlice();
}

bool RankStarter::stillWanted() const
{
    return !m_run.userStop && !m_run.policy.failureSeen() && m_run.attempt == m_attempt &&
           m_run.masterPort == m_masterPort;
}

void RankStarter::startSlice()
{
    QElapsedTimer slice;
    slice.start();
    while (m_next > 0 && m_next < m_run.ranks.size() && stillWanted()) {
        m_actions.startRank(m_next++, m_masterPort);
        if (slice.elapsed() >= kSliceMs)
            break;
    }
    if (m_next <= 0 || m_next >= m_run.ranks.size() || !stillWanted()) {
        m_next = 0;
        return;
    }
    QTimer::singleShot(0, this, &RankStarter::startSlice);
}

} // namespace rankdeck
