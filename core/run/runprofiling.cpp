// SPDX-License-Identifier: GPL-3.0-or-later
//
// RunController's profiles (ProfileRecorder): asked for by a front end or through the record
// (`rankdeck-cli profile`), answered by the supervisors' `profile` events.
#include "record/profilerecorder.h"
#include "run/runcontroller.h"

namespace rankdeck {

void RunController::setupProfiler()
{
    if (!m_profiler)
        m_profiler = new ProfileRecorder(this);
    m_profiler->setRun(
        [this](int rank, const QByteArray &line) {
            if (m_transport)
                m_transport->writeStdin(rank, line);
        },
        [this] { return m_run.livingRanks(); }, m_run.record.profilesDirectory());
    connect(m_profiler, &ProfileRecorder::message, this, &RunController::note,
            Qt::UniqueConnection);
    connect(m_profiler, &ProfileRecorder::finished, this, &RunController::profileFinished,
            Qt::UniqueConnection);
}

bool RunController::profile(int seconds, const QList<int> &ranks, QString *error)
{
    if (m_run.readOnly || !m_transport || isTerminal(m_run.state) || m_run.finalized) {
        *error = tr("the run is not going on here");
        return false;
    }
    if (!m_run.config.isProgram()) {
        *error = tr("profiles sample a user's Python program: the built-in worker reports its "
                    "step and communication times instead");
        return false;
    }
    if (!m_profiler) {
        *error = tr("the run has not started its ranks yet");
        return false;
    }
    return m_profiler->start(seconds, ranks, error);
}

bool RunController::profiling() const
{
    return m_profiler && m_profiler->busy();
}

void RunController::requestProfile(int seconds, const QList<int> &ranks)
{
    QString error;
    if (profile(seconds, ranks, &error))
        note(tr("profile of %1 s requested").arg(seconds));
    else
        note(tr("profile not recorded: %1").arg(error));
}

void RunController::profileEvent(int rank, const WorkerEvent &event)
{
    if (m_profiler)
        m_profiler->handleEvent(rank, event);
}

} // namespace rankdeck
