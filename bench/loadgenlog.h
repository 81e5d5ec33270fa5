// SPDX-License-Identifier: GPL-3.0-or-later
//
// The check that no line of a rankdeck-loadgen rank went missing, shared by bench_gui and the
// GUI scale test so that both hold the launcher to the same standard.
#pragma once

#include "store/compactedfile.h"

#include <QByteArray>
#include <QString>

namespace rankdeck {

// Each line of a rank's log in the run record (its compressed segments too), without its
// newline; false with *problem when the record cannot be read.
template <typename EachLine>
bool forEachLogLine(const QString &path, EachLine each, QString *problem = nullptr)
{
    QString why;
    const QByteArray text = CompactedFile::readAll(path, &why);
    if (!why.isEmpty()) {
        if (problem)
            *problem = why;
        return false;
    }
    for (qsizetype at = 0, end = 0; at < text.size(); at = end + 1) {
        end = text.indexOf('\n', at);
        if (end < 0)
            end = text.size();
        each(text.mid(at, end - at));
    }
    return true;
}

// Reads a rank's log from the run record (its compressed segments too): its "loadgen rank R line N"
// lines must run 0..n-1 in order, and n must be what the generator said it wrote in its last words
// on stderr.
inline bool rankLogComplete(const QString &path, int rank, qint64 *lines, QString *problem)
{
    const QByteArray prefix = "loadgen rank " + QByteArray::number(rank) + " line ";
    const QByteArray summary = "loadgen rank " + QByteArray::number(rank) + " wrote ";
    qint64 expected = 0;
    qint64 wrote = -1;
    QString gap;
    const bool read = forEachLogLine(
        path,
        [&](const QByteArray &line) {
            if (!gap.isEmpty())
                return;
            if (line.startsWith(summary)) {
                wrote = line.mid(summary.size()).split(' ').value(0).toLongLong();
                return;
            }
            if (!line.startsWith(prefix))
                return;
            const qsizetype colon = line.indexOf(':', prefix.size());
            const qint64 n = line.mid(prefix.size(), colon - prefix.size()).toLongLong();
            if (n != expected)
                gap = QStringLiteral("rank %1: line %2 where %3 was due")
                          .arg(rank)
                          .arg(n)
                          .arg(expected);
            else
                ++expected;
        },
        problem);
    if (!read)
        return false;
    if (!gap.isEmpty()) {
        *problem = gap;
        return false;
    }
    if (wrote != expected) {
        *problem = QStringLiteral("rank %1: %2 lines in %3, the generator wrote %4")
                       .arg(rank)
                       .arg(expected)
                       .arg(path)
                       .arg(wrote);
        return false;
    }
    *lines = expected;
    return true;
}

// Counts a rank's "loadgen rank R line N" lines in the run record and reads the count the
// generator said it wrote (-1 when its last words are not there: it was killed before them).
// Unlike rankLogComplete() it does not stop at a gap; `gaps` gets how many times a line was not the
// one due (a jump over missing lines, or one out of order).
inline bool rankLogCount(const QString &path, int rank, qint64 *lines, qint64 *wrote, qint64 *gaps)
{
    *lines = 0;
    *wrote = -1;
    *gaps = 0;
    const QByteArray prefix = "loadgen rank " + QByteArray::number(rank) + " line ";
    const QByteArray summary = "loadgen rank " + QByteArray::number(rank) + " wrote ";
    qint64 next = 0;
    return forEachLogLine(path, [&](const QByteArray &line) {
        if (line.startsWith(summary)) {
            *wrote = line.mid(summary.size()).split(' ').value(0).toLongLong();
            return;
        }
        if (!line.startsWith(prefix))
            return;
        const qsizetype colon = line.indexOf(':', prefix.size());
        const qint64 n = line.mid(prefix.size(), colon - prefix.size()).toLongLong();
        if (n != next)
            ++*gaps;
        next = n + 1;
        ++*lines;
    });
}

} // namespace rankdeck
