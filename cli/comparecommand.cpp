// SPDX-License-Identifier: GPL-3.0-or-later
#include "comparecommand.h"

#include "cliutil.h"
#include "models/rundiffmodel.h"
#include "record/runrecord.h"

namespace rankdeck::cli {

int CompareCommand::run(const QStringList &args)
{
    QCommandLineParser parser;
    parser.addPositionalArgument(QStringLiteral("RUN"),
                                 CliUtil::tr("Two or more run ids or names."),
                                 QStringLiteral("RUN RUN..."));
    int code = 0;
    if (!CliUtil::parse(parser, args,
                        CliUtil::tr("Show what differs between runs, side by side: worker flags or "
                                    "the program's command line, profile, world size, duration, "
                                    "final and best value of each metric."),
                        &code))
        return code;
    const QStringList names = parser.positionalArguments();
    if (names.size() < 2)
        return CliUtil::usageError(CliUtil::tr("compare needs at least two runs"), args.value(0));
    QList<RunSummary> runs;
    for (const QString &name : names) {
        QString error;
        const QString dir = RunRecord::resolve(CliUtil::runsDirectory(), name, &error);
        if (dir.isEmpty()) {
            CliUtil::err() << QStringLiteral("rankdeck-cli: ") << error << '\n';
            return ExitFailed;
        }
        RunSummary s;
        if (!RunSummary::fromRecord(dir, &s, &error)) {
            CliUtil::err() << QStringLiteral("rankdeck-cli: ") << error << '\n';
            return ExitFailed;
        }
        runs << s;
    }
    // Two runs of one name are told apart by their ids.
    for (qsizetype i = 0; i < runs.size(); ++i)
        for (qsizetype j = 0; j < runs.size(); ++j)
            if (i != j && runs[i].name == runs[j].name)
                runs[i].name = runs[i].id;
    RunDiffModel model;
    model.setRuns(runs);
    CliUtil::out() << model.toText();
    CliUtil::out().flush();
    return ExitOk;
}

} // namespace rankdeck::cli
