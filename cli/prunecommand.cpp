// SPDX-License-Identifier: GPL-3.0-or-later
#include "prunecommand.h"

#include "cliutil.h"
#include "config/syncmanifest.h"
#include "record/runprune.h"
#include "record/runrecord.h"
#include "util/clock.h"
#include "util/printabletext.h"

#include <QCommandLineParser>
#include <QDir>

namespace rankdeck::cli {

int PruneCommand::run(const QStringList &args)
{
    QCommandLineParser parser;
    const QCommandLineOption olderOpt(
        QStringLiteral("older-than"),
        CliUtil::tr("Delete runs started longer ago than AGE: 7d, 12h, 30m, 90s, or days."),
        QStringLiteral("AGE"));
    const QCommandLineOption keepOpt(QStringLiteral("keep"),
                                     CliUtil::tr("Keep the newest N runs, delete the others."),
                                     QStringLiteral("N"));
    const QCommandLineOption dryOpt(QStringLiteral("dry-run"),
                                    CliUtil::tr("Only say what would be deleted and its size."));
    parser.addOptions({olderOpt, keepOpt, dryOpt});
    int code = 0;
    if (!CliUtil::parse(parser, args,
                        CliUtil::tr("Delete recorded runs by age or count. A run that may still "
                                    "be going (running here or elsewhere, or detached on its "
                                    "nodes) is never deleted."),
                        &code))
        return code;
    const QString cmd = args.value(0);
    if (!parser.positionalArguments().isEmpty())
        return CliUtil::usageError(CliUtil::tr("unexpected argument \"%1\"")
                                       .arg(parser.positionalArguments().constFirst()),
                                   cmd);
    if (!parser.isSet(olderOpt) && !parser.isSet(keepOpt))
        return CliUtil::usageError(CliUtil::tr("say which runs go: --older-than AGE, --keep N or "
                                               "both"),
                                   cmd);
    qint64 olderUs = 0;
    if (parser.isSet(olderOpt) && !RunPrune::parseAge(parser.value(olderOpt), &olderUs))
        return CliUtil::usageError(
            CliUtil::tr("--older-than: \"%1\" is not an age (7d, 12h, 30m, 90s)")
                .arg(parser.value(olderOpt)),
            cmd);
    int keep = -1;
    if (parser.isSet(keepOpt) && !CliUtil::parseInt(parser.value(keepOpt), 0, 1000000, &keep))
        return CliUtil::usageError(
            CliUtil::tr("--keep: \"%1\" is not a number from 0").arg(parser.value(keepOpt)), cmd);
    const bool dry = parser.isSet(dryOpt);

    const QList<RunPrune::Choice> choices =
        RunPrune::choose(RunRecord::list(CliUtil::runsDirectory()), nowUs(), olderUs, keep);
    QTextStream &out = CliUtil::out();
    qint64 freed = 0;
    int removed = 0, failed = 0;
    for (const RunPrune::Choice &c : choices) {
        if (!c.remove) {
            if (RunPrune::mayStillRun(c.run))
                out << CliUtil::tr("kept     %1  %2 (%3)")
                           .arg(printableLabel(c.run.id, 64), printableLabel(c.run.name, 32),
                                c.reason)
                    << '\n';
            continue;
        }
        const qint64 bytes = RunPrune::diskBytes(c.run.directory);
        const QString what = QStringLiteral("%1  %2  %3 (%4)")
                                 .arg(printableLabel(c.run.id, 64), printableLabel(c.run.name, 32),
                                      SyncManifest::formatSize(bytes), c.reason);
        if (dry) {
            out << CliUtil::tr("would delete %1").arg(what) << '\n';
            freed += bytes;
            ++removed;
        } else if (QDir(c.run.directory).removeRecursively()) {
            out << CliUtil::tr("deleted  %1").arg(what) << '\n';
            freed += bytes;
            ++removed;
        } else {
            CliUtil::err()
                << CliUtil::tr("rankdeck-cli: could not delete all of %1").arg(c.run.directory)
                << '\n';
            ++failed;
        }
    }
    out << (dry ? CliUtil::tr("%1 run(s) would be deleted, %2 freed")
                : CliUtil::tr("%1 run(s) deleted, %2 freed"))
               .arg(removed)
               .arg(SyncManifest::formatSize(freed))
        << '\n';
    out.flush();
    CliUtil::err().flush();
    return failed > 0 ? ExitFailed : ExitOk;
}

} // namespace rankdeck::cli
