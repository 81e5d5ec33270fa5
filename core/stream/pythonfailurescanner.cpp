// SPDX-License-Identifier: GPL-3.0-or-later
#include "stream/pythonfailurescanner.h"

namespace rankdeck {

void PythonFailureScanner::addLine(int rank, const QString &line)
{
    m_readers[rank].addLine(line);
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
    return it == m_readers.cend() ? 0 : it->generation();
}

} // namespace rankdeck
