// SPDX-License-Identifier: GPL-3.0-or-later
#include "cliutil.h"

#include "record/runrecord.h"
#include "store/csvexport.h"
#include "store/metricsstore.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <cstdio>
#include <unistd.h>

namespace rankdeck::cli {

QTextStream &CliUtil::out()
{
    static QTextStream s(stdout);
    return s;
}

QTextStream &CliUtil::err()
{
    static QTextStream s(stderr);
    return s;
}

QString CliUtil::tr(const char *text)
{
    return QCoreApplication::translate("rankdeck-cli", text);
}

bool CliUtil::parse(QCommandLineParser &parser, const QStringList &args, const QString &description,
                    int *exitCode)
{
    parser.setApplicationDescription(description);
    parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    const QCommandLineOption help({QStringLiteral("h"), QStringLiteral("help")},
                                  tr("Show this help."));
    parser.addOption(help);
    if (!parser.parse(args)) {
        *exitCode = usageError(parser.errorText(), args.value(0));
        return false;
    }
    if (parser.isSet(help)) {
        QString text = parser.helpText();
        // QCommandLineParser names the program from argv[0]; show the subcommand as typed.
        text.replace(QStringLiteral("Usage: ") + QCoreApplication::applicationFilePath(),
                     QStringLiteral("Usage: ") + args.value(0));
        out() << text;
        out().flush();
        *exitCode = ExitOk;
        return false;
    }
    return true;
}

int CliUtil::usageError(const QString &message, const QString &command)
{
    err() << QStringLiteral("rankdeck-cli: ") << message << '\n'
          << tr("Try '%1 --help'.").arg(command) << '\n';
    err().flush();
    return ExitUsage;
}

bool CliUtil::parseInt(const QString &text, int min, int max, int *value)
{
    bool ok = false;
    const int v = text.toInt(&ok);
    if (!ok || v < min || v > max)
        return false;
    *value = v;
    return true;
}

QString CliUtil::runsDirectory()
{
    return RunRecord::defaultRunsDirectory();
}

QString CliUtil::formatStep(qint64 step, qint64 total)
{
    return total > 0 ? tr("step %1/%2").arg(step).arg(total) : tr("step %1").arg(step);
}

QString CliUtil::formatDuration(qint64 us)
{
    if (us <= 0)
        return QStringLiteral("-");
    const double s = us / 1e6;
    if (s < 60)
        return QString::number(s, 'f', 1) + QStringLiteral(" s");
    const qint64 total = qint64(s);
    if (total < 3600)
        return QStringLiteral("%1m%2s").arg(total / 60).arg(total % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1h%2m")
        .arg(total / 3600)
        .arg((total / 60) % 60, 2, 10, QLatin1Char('0'));
}

QString CliUtil::formatTime(qint64 us)
{
    if (us <= 0)
        return QStringLiteral("-");
    return QDateTime::fromMSecsSinceEpoch(us / 1000).toLocalTime().toString(
        QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

bool CliUtil::stdoutIsTerminal()
{
    return ::isatty(STDOUT_FILENO) == 1;
}

bool CliUtil::loadRecordedMetrics(const QString &runDirectory, MetricsStore *store, QString *error,
                                  const QStringList &names)
{
    const QString path = QDir(runDirectory).filePath(QStringLiteral("metrics.csv"));
    if (!QFileInfo::exists(path))
        return true; // a run that reported no metric yet
    QList<CsvExport::Row> rows;
    const bool ok = CsvExport::read(path, &rows, error);
    for (const CsvExport::Row &row : std::as_const(rows)) {
        if (names.isEmpty() || names.contains(row.metric))
            store->append(row.rank, row.metric, row.step, row.wallTimeUs, row.value);
    }
    return ok;
}

bool CliUtil::loadRecentMetrics(const QString &runDirectory, MetricsStore *store, QString *error,
                                const QStringList &names, qint64 tailBytes)
{
    const QString path = QDir(runDirectory).filePath(QStringLiteral("metrics.csv"));
    QFile file(path);
    if (!file.exists())
        return true;
    if (!file.open(QIODevice::ReadOnly)) {
        *error = tr("cannot read %1: %2").arg(path, file.errorString());
        return false;
    }
    qint64 from = qMax<qint64>(0, file.size() - tailBytes);
    if (from > 0) {
        // From the first whole line: a row cut at its start could still read as a row.
        file.seek(from - 1);
        file.readLine();
        from = file.pos();
    }
    file.close();
    QList<CsvExport::Row> rows;
    qint64 end = from;
    const bool ok = CsvExport::readFrom(path, from, &rows, &end, error);
    for (const CsvExport::Row &row : std::as_const(rows))
        if (names.isEmpty() || names.contains(row.metric))
            store->append(row.rank, row.metric, row.step, row.wallTimeUs, row.value);
    return ok;
}

bool CliUtil::openRun(const QString &run, RunRecord *record, int *code)
{
    QString error;
    const QString dir = RunRecord::resolve(runsDirectory(), run, &error);
    if (dir.isEmpty() || !record->open(dir, &error)) {
        err() << QStringLiteral("rankdeck-cli: ") << error << '\n';
        err().flush();
        *code = ExitFailed;
        return false;
    }
    return true;
}

} // namespace rankdeck::cli
