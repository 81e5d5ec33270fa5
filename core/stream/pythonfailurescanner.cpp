// SPDX-License-Identifier: GPL-3.0-or-later
#include "stream/pythonfailurescanner.h"

#include <QRegularExpression>

namespace rankdeck {

void PythonFailureScanner::addLine(int rank, const QString &line)
{
    m_readers[rank].addLine(line);
    // libstdc++'s verbose terminate handler: two lines, the type then "  what():  <message>".
    if (m_throwing.contains(rank)) {
        static const QRegularExpression what(QStringLiteral(R"(^\s*what\(\):\s*(.*)$)"));
        const QRegularExpressionMatch m = what.match(QStringView(line).left(pythonlimits::MaxLine));
        const QString type = m_throwing.take(rank);
        if (m.hasMatch()) {
            m_terminates.insert(rank, type + QStringLiteral(": ") + m.captured(1).trimmed());
            ++m_linesFound;
        }
    }
    if (line.contains(QLatin1String("terminate called after throwing an instance of '"))) {
        static const QRegularExpression thrown(
            QStringLiteral(R"(terminate called after throwing an instance of '([^']{1,200})')"));
        const QRegularExpressionMatch m = thrown.match(line);
        if (m.hasMatch())
            m_throwing.insert(rank, m.captured(1));
    }
    // torch/csrc/DataLoader.cpp's words; cheap test first, most lines have no "DataLoader".
    if (line.contains(QLatin1String("DataLoader worker (pid "))) {
        static const QRegularExpression death(QStringLiteral(
            R"(DataLoader worker \(pid \d+\) (?:is killed by signal: [^.\n]{1,60}\.|exited unexpectedly with exit code -?\d+))"));
        const QRegularExpressionMatch m =
            death.match(QStringView(line).left(pythonlimits::MaxLine));
        if (m.hasMatch()) {
            m_childDeaths.insert(rank, m.captured(0));
            ++m_linesFound;
        }
    }
}

QList<PythonException> PythonFailureScanner::lastException(int rank) const
{
    const auto it = m_readers.constFind(rank);
    return it == m_readers.cend() ? QList<PythonException>() : it->lastException();
}

PythonFaultDump PythonFailureScanner::lastFaultDump(int rank) const
{
    const auto it = m_readers.constFind(rank);
    return it == m_readers.cend() ? PythonFaultDump() : it->lastFaultDump();
}

quint64 PythonFailureScanner::generation(int rank) const
{
    const auto it = m_readers.constFind(rank);
    return (it == m_readers.cend() ? 0 : it->generation()) + m_linesFound;
}

} // namespace rankdeck
