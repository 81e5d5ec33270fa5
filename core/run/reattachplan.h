// SPDX-License-Identifier: GPL-3.0-or-later
//
// Taking over a run that a launcher left running (a detached run, or one whose launcher died):
// load() reads its directory and checks that there is something to take over and that nobody
// else follows it; the plan then gives every rank's last known status, its runtime (started,
// seen ending) and the stream offsets its record holds, and attach() asks a transport that can
// re-attach to resume each rank still running at the next byte of each stream.
#pragma once

#include "config/launchplan.h"
#include "diagnosis/failurereport.h"
#include "diagnosis/rankruntime.h"
#include "record/runrecord.h"
#include "record/runstatefile.h"

#include <QList>
#include <QString>

namespace rankdeck {

class Transport;

class ReattachPlan
{
public:
    // false and *error (naming the run and why) when the run cannot be taken over.
    bool load(const QString &runDirectory, QString *error);

    const RunRecord &record() const { return m_record; }
    const RunStateFile &state() const { return m_state; }
    const LaunchPlan &launchPlan() const { return m_plan; }
    const FailureReport &failureReport() const { return m_report; }
    // Gang restarts the taken-over run may still make: once a rank was seen ending, no more than
    // the attempts already made (so none from here on), since a rank not attached cannot be
    // numbered after its old starts (it would overwrite rank<R>.a1.*).
    int maxRestarts() const { return m_maxRestarts; }
    // Per rank, launcher clock nowUs as their last sign of life and step change.
    QList<RankRuntime> runtimes(qint64 nowUs) const;

    // Resumes every rank that has a process and was not seen ending; returns the ranks that
    // never got one (rank 0's port never came before the launcher left).
    static QList<int> attach(Transport &transport, const LaunchPlan &plan,
                             const QList<RankRuntime> &runtimes,
                             const QList<StreamOffsets> &offsets, int masterPort);

private:
    RunRecord m_record;
    RunStateFile m_state;
    LaunchPlan m_plan;
    FailureReport m_report;
    int m_maxRestarts = 0;
};

} // namespace rankdeck
