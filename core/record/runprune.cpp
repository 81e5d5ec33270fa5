// SPDX-License-Identifier: GPL-3.0-or-later
#include "record/runprune.h"

#include <QCoreApplication>
#include <QDirIterator>
#include <QFileInfo>
#include <QRegularExpression>

namespace rankdeck::RunPrune {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("rankdeck::RunPrune", text);
}

} // namespace

bool mayStillRun(const RunInfo &run)
{
    return !isTerminal(run.state) && (!run.launcherGone || run.detached || run.detachable);
}

qint64 diskBytes(const QString &directory)
{
    qint64 bytes = 0;
    QDirIterator it(directory, QDir::Files | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QFileInfo file(it.next());
        if (!file.isSymLink())
            bytes += file.size();
    }
    return bytes;
}

QList<Choice> choose(const QList<RunInfo> &runs, qint64 nowUs, qint64 olderThanUs, int keep)
{
    QList<Choice> out;
    out.reserve(runs.size());
    int kept = 0;
    for (const RunInfo &run : runs) {
        Choice c{run, {}, false};
        const bool old = olderThanUs > 0 && nowUs - run.createdUs > olderThanUs;
        const bool beyond = keep >= 0 && kept >= keep;
        if (mayStillRun(run)) {
            c.reason = tr("still running: stop it first");
        } else if (old || beyond) {
            c.remove = true;
            c.reason = old ? tr("older than asked") : tr("beyond the newest %1").arg(keep);
        } else {
            c.reason = keep >= 0 ? tr("among the newest %1").arg(keep) : tr("recent enough");
        }
        // A run that may still go counts among those kept: it is kept, whatever its age.
        if (!c.remove)
            ++kept;
        out << c;
    }
    return out;
}

bool parseAge(const QString &text, qint64 *us)
{
    static const QRegularExpression re(QStringLiteral("^\\s*(\\d+(?:\\.\\d+)?)\\s*([dhms]?)\\s*$"));
    const QRegularExpressionMatch m = re.match(text);
    if (!m.hasMatch())
        return false;
    const double n = m.captured(1).toDouble();
    const QString unit = m.captured(2);
    const double seconds = unit == QLatin1String("h")   ? 3600.0
                           : unit == QLatin1String("m") ? 60.0
                           : unit == QLatin1String("s") ? 1.0
                                                        : 86400.0;
    const double value = n * seconds * 1e6;
    if (value > 9.0e18)
        return false;
    *us = qint64(value);
    return true;
}

} // namespace rankdeck::RunPrune
