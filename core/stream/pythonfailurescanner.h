// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Python side of a rank's failure, found in its own output: fed every log line of every
// rank as the program printed it, it keeps per rank only the last complete traceback chain and
// the last faulthandler dump, so that when a rank fails the launcher can say which exception
// (or which Python frames at a fatal signal) ended it, even when the supervisor sent nothing.
// A traceback printed by a program that then went on (a logged warning, traceback.print_exc())
// is kept as "last" too: the launcher uses it only when the rank fails.
// Memory stays bounded per rank whatever comes in (pythonlimits); a rank's lines must come in
// its own order, ranks may interleave. Plain data in and out, like LogMetricExtractor.
#pragma once

#include "stream/pythontraceback.h"
#include "stream/pythontracebackreader.h"

#include <QHash>
#include <QList>
#include <QString>

namespace rankdeck {

class PythonFailureScanner
{
public:
    void addLine(int rank, const QString &line);

    // The last complete chain on `rank` (printed order; the last exception ended it); empty
    // when the rank printed none since its last reset().
    QList<PythonException> lastException(int rank) const;
    PythonFaultDump lastFaultDump(int rank) const;
    // The last line torch printed of a DataLoader worker's death ("DataLoader worker (pid 42)
    // is killed by signal: Segmentation fault."), from any traceback: torch may raise it inside
    // its own sys.excepthook, whose "Error in sys.excepthook:" traceback is then followed by the
    // rank's original one (a ConnectionResetError), so it is not in lastException(). Bounded.
    QString lastChildDeath(int rank) const { return m_childDeaths.value(rank); }
    // What libstdc++ printed when a C++ exception escaped and std::terminate aborted the rank
    // ("terminate called after throwing an instance of 'gloo::EnforceNotMet'" then "  what():
    // …"), as "gloo::EnforceNotMet: …": the library's own words for a SIGABRT. Bounded.
    QString lastTerminate(int rank) const { return m_terminates.value(rank); }
    // Changes whenever lastException(rank) or lastFaultDump(rank) does: cheap polling.
    quint64 generation(int rank) const;

    // A new attempt of the rank: what it printed before no longer counts.
    void reset(int rank)
    {
        m_readers.remove(rank);
        m_childDeaths.remove(rank);
        m_terminates.remove(rank);
        m_throwing.remove(rank);
    }
    void resetAll()
    {
        m_readers.clear();
        m_childDeaths.clear();
        m_terminates.clear();
        m_throwing.clear();
    }

private:
    QHash<int, PythonTracebackReader> m_readers;
    QHash<int, QString> m_childDeaths;
    QHash<int, QString> m_terminates;
    QHash<int, QString> m_throwing; // the type of "terminate called after throwing", until what()
    quint64 m_linesFound = 0;       // child deaths and terminates found: part of generation()
};

} // namespace rankdeck
