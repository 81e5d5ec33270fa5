// SPDX-License-Identifier: GPL-3.0-or-later
//
// The line-by-line reader behind parsePythonTraceback(), parseFaultHandlerDump() and
// PythonFailureScanner: one program's lines in, the last complete traceback chain and the last
// faulthandler dump out. Line by line because the launcher sees a rank's stderr as it comes and
// cannot hold it all; a state machine over CPython's formats:
//   - A traceback is complete at its "Type: message" line; the lines after it belong to the
//     message until a blank line, a line that starts something else (a traceback, a dump, a
//     log line with a "[W1201 …]"/"I1201 …"/"2026-…" prefix) or the message bound.
//   - Text between two tracebacks joins them into a chain only when it is exactly one of
//     Python's two separator sentences between blank lines.
//   - An ExceptionGroup ("  + Exception Group Traceback", "|" indents) gives the group's own
//     type, message and frames; its sub-exceptions are skipped.
//   - A faulthandler dump has no end marker (the process dies right after it): it is "last"
//     as soon as its first line is seen and grows with each thread and frame.
// Memory stays bounded whatever comes in (pythonlimits).
#pragma once

#include "stream/pythontraceback.h"

#include <QList>
#include <QString>

namespace rankdeck {

class PythonTracebackReader
{
public:
    void addLine(QStringView raw);

    const QList<PythonException> &lastException() const { return m_lastChain; }
    const PythonFaultDump &lastFaultDump() const { return m_lastDump; }
    // Bumped whenever lastException() or lastFaultDump() changes.
    quint64 generation() const { return m_generation; }

    void reset() { *this = PythonTracebackReader(); }

private:
    enum class State
    {
        Idle,
        Frames,     // after "Traceback (most recent call last):" (or a bare SyntaxError frame)
        Message,    // after "Type: message": continuation lines
        AfterBlank, // a blank line after the message: a separator may follow
        Separator,  // the separator sentence seen: a blank line, then a traceback
        Traceback,  // the separator and blank seen: the next traceback must start now
        GroupTail,  // an ExceptionGroup's own exception seen: its sub-exceptions follow
        Dump,       // in a faulthandler dump
        DumpCStack, // Python 3.14's C stack section of a dump: skipped
    };

    bool startsSomething(const QString &line); // Idle's rules; true when the line started one
    void frameLine(const QString &line);
    void finishException(const QString &type, const QString &message);
    void appendMessage(const QString &line);
    void publishChain();
    void abandonChain();
    void dumpLine(const QString &line);
    QString unwrapGroup(const QString &line, bool *inGroup) const;

    State m_state = State::Idle;
    QList<PythonException> m_chain; // the chain being read; its last element is in progress
    QList<PythonFrame> m_frames;    // of the exception in progress, outermost first
    int m_framesOmitted = 0;
    QString m_pendingChainedBy;
    bool m_syntaxOnly = false; // a traceback without header: only a SyntaxError may end it
    int m_groupColumn = -1;    // column of an ExceptionGroup's "|" bars; -1 outside one
    int m_messageLines = 0;
    bool m_chainPrefixed = false; // the traceback's lines carried torch's "[rankN]: " prefix
    bool m_dumpSkipping = false;  // past the thread bound: frames ignored until a header
    int m_dumpFrames = 0;         // frames in m_lastDump, all threads

    QList<PythonException> m_lastChain;
    PythonFaultDump m_lastDump;
    quint64 m_generation = 0;
};

} // namespace rankdeck
