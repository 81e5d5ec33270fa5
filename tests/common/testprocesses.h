// SPDX-License-Identifier: GPL-3.0-or-later
//
// Small helpers the end-to-end tests share: which processes of a run are still alive, and a
// record file's lines.
#pragma once

#include <QByteArray>
#include <QFile>
#include <QList>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace rankdeck::testing {

// Processes whose command line contains s (pgrep -a -f), e.g. a run id that every rank and
// wrapper of a run carries.
inline QStringList processesMatching(const QString &s)
{
    QProcess p;
    p.start(QStringLiteral("pgrep"), {QStringLiteral("-a"), QStringLiteral("-f"), QStringLiteral("--"), s});
    p.waitForFinished(10000);
    QStringList lines = QString::fromLocal8Bit(p.readAllStandardOutput()).split(u'\n', Qt::SkipEmptyParts);
    // pgrep never lists itself, but a shell running it could.
    lines.removeIf([](const QString &l) { return l.contains(QLatin1String("pgrep")); });
    return lines;
}

// A file's lines without their '\n'; empty when it cannot be read.
inline QList<QByteArray> fileLines(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    QList<QByteArray> l = f.readAll().split('\n');
    if (!l.isEmpty() && l.last().isEmpty())
        l.removeLast();
    return l;
}

} // namespace rankdeck::testing
