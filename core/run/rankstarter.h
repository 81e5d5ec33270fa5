// SPDX-License-Identifier: GPL-3.0-or-later
//
// Starts the ranks after rank 0 in slices of the event loop, not in one loop: a local rank's
// start is a fork and exec of the launcher (a few ms in a GUI process), so starting 511 of them
// at once froze the GUI for 1–2 s (issue 31). Each turn starts ranks for up to kSliceMs, then
// yields to the event loop; what stops or restarts the run in between (a stop, a failure, a new
// attempt) stops the rest.
#pragma once

#include <QObject>

namespace rankdeck {

struct RunData;
class RunActions;

class RankStarter : public QObject
{
    Q_OBJECT

public:
    static constexpr int kSliceMs = 10;

    RankStarter(RunData &run, RunActions &actions);

    // Ranks 1 … N-1 with the store rank 0 serves on masterPort, in this attempt.
    void startOthers(int masterPort);
    bool busy() const { return m_next > 0; }

private:
    void startSlice();
    bool stillWanted() const;

    RunData &m_run;
    RunActions &m_actions;
    int m_next = 0; // the next rank to start; 0: none pending
    int m_masterPort = 0;
    int m_attempt = 0;
};

} // namespace rankdeck
