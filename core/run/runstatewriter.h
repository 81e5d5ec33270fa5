// SPDX-License-Identifier: GPL-3.0-or-later
//
// state.json of a running run, and the health of its record: what the run is (RunStateFile,
// with every rank's stream offsets from its pipeline), written whenever the run asks; and when
// the disk stops taking the record (a full disk), that said at once and once, the room kept
// for it released, and the run stopped rather than left running unrecorded. The root cause
// summary the run shows comes from here too, since a record with a gap names it first.
#pragma once

#include "record/runstatefile.h"
#include "record/streamoffsets.h"
#include "run/rundata.h"

#include <QList>
#include <QString>

namespace rankdeck {

class FlightRecorderCollector;
class RunActions;

class RunStateWriter
{
public:
    // detach: the run was launched so that its ranks may outlive the launcher.
    RunStateWriter(RunData &run, RunActions &actions, const FlightRecorderCollector &collector,
                   bool detach);

    RunStateFile stateFile() const;
    // Writes state.json now (a read-only run: nothing); the run is no longer dirty.
    void write();
    // After the stores took output: a disk that failed them makes the record unwritable.
    void checkRecord();
    // The root cause; when the record could not be written, that, with what it lacks.
    QString rootCauseSummary() const;
    QString recordGapSummary() const;
    QList<StreamOffsets> streamOffsets() const;

private:
    void recordUnwritable(const QString &why);

    RunData &m_run;
    RunActions &m_actions;
    const FlightRecorderCollector &m_collector;
    bool m_detach = false;
    bool m_compactionNoted = false;
};

} // namespace rankdeck
