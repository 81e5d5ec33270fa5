// SPDX-License-Identifier: GPL-3.0-or-later
// Longer than the house's ~600 lines: six commands on recorded runs (runs, show, logs,
// stop, export, stacks), each a small parser and printer over the run lookup and option helpers
// they share; a command that grows is the one to move into a class of its own.
#include "runcommands.h"

#include "cliutil.h"
#include "collectiveoutput.h"
#include "config/syncmanifest.h"
#include "diagnosis/failurereport.h"
#include "diagnosis/rankstackdump.h"
#include "diagnosis/stragglerreport.h"
#include "prunecommand.h"
#include "rankoutput.h"
#include "record/rankgroups.h"
#include "record/runprune.h"
#include "record/runrecord.h"
#include "record/runstatefile.h"
#include "slowoutput.h"
#include "store/compactedfile.h"
#include "store/csvexport.h"
#include "store/logfollower.h"
#include "store/logstore.h"
#include "store/metricsstore.h"
#include "store/tensorboardexport.h"
#include "stream/logmetricextractor.h"
#include "util/buildversion.h"
#include "util/printabletext.h"
#include "util/processidentity.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>
#include <QThread>

#include <cerrno>
#include <climits>
#include <csignal>
#include <unistd.h>

namespace rankdeck::cli {

namespace {

bool oneRunArgument(QCommandLineParser &parser, const QString &cmd, int *code)
{
    if (parser.positionalArguments().size() != 1) {
        *code = CliUtil::usageError(
            parser.positionalArguments().isEmpty()
                ? CliUtil::tr("missing RUN (a run id or name)")
                : CliUtil::tr("expected one RUN, got %1").arg(parser.positionalArguments().size()),
            cmd);
        return false;
    }
    return true;
}

QString stateText(const RunInfo &i)
{
    // The one state the GUI shows too: "stuck", "desynced", "stopped by user".
    QString s = shownStateWord(i.shown);
    // Issue 27, defect 5: a hung run the user stopped read "stopped", as a healthy one would.
    if (i.hung && i.shown != ShownState::Stuck)
        s += CliUtil::tr(" (hung)");
    if (i.launcherGone)
        s += CliUtil::tr(" (launcher gone)");
    return s;
}

} // namespace

int RunCommands::runs(const QStringList &args)
{
    if (args.value(1) == QLatin1String("prune")) {
        QStringList rest = args.mid(2);
        rest.prepend(args.value(0) + QStringLiteral(" prune"));
        return PruneCommand::run(rest);
    }
    QCommandLineParser parser;
    const QCommandLineOption namesOpt(
        QStringLiteral("names"),
        CliUtil::tr("Print only each run's id and name, one per line (for shell completion)."));
    parser.addOption(namesOpt);
    int code = 0;
    if (!CliUtil::parse(parser, args,
                        CliUtil::tr("List recorded runs, newest first, with the disk each holds. "
                                    "`runs prune --older-than AGE | --keep N [--dry-run]` deletes "
                                    "old ones."),
                        &code))
        return code;
    if (!parser.positionalArguments().isEmpty())
        return CliUtil::usageError(CliUtil::tr("unexpected argument \"%1\"")
                                       .arg(parser.positionalArguments().constFirst()),
                                   args.value(0));
    // One pass: each run.json is read once, for the list and for the broken ones alike.
    const RunRecord::Listing listing = RunRecord::scan(CliUtil::runsDirectory());
    const QList<RunInfo> &list = listing.runs;
    if (parser.isSet(namesOpt)) {
        // What RUN accepts; names are others' bytes, so only printable ones, each once.
        QStringList words;
        QSet<QString> seen; // a thousand runs: no list search per word
        for (const RunInfo &i : list)
            for (const QString &word : {i.id, i.name})
                if (!word.isEmpty() && printableLabel(word, 256) == word && !seen.contains(word)) {
                    seen.insert(word);
                    words << word;
                }
        for (const QString &word : std::as_const(words))
            CliUtil::out() << word << '\n';
        CliUtil::out().flush();
        return ExitOk;
    }
    const QList<BrokenRun> &broken = listing.broken;
    QTextStream &out = CliUtil::out();
    if (list.isEmpty() && broken.isEmpty()) {
        out << CliUtil::tr("no runs in %1").arg(CliUtil::runsDirectory()) << '\n';
        return ExitOk;
    }
    out << QStringLiteral("%1  %2  %3  %4  %5  %6  %7\n")
               .arg(CliUtil::tr("ID"), -36)
               .arg(CliUtil::tr("NAME"), -16)
               .arg(CliUtil::tr("STATE"), -10)
               .arg(CliUtil::tr("RANKS"), 5)
               .arg(CliUtil::tr("STARTED"), -19)
               .arg(CliUtil::tr("SIZE"), 10)
               .arg(CliUtil::tr("ROOT CAUSE"));
    for (const RunInfo &i : list) {
        // Names and root causes are others' bytes: one line each, bounded, like rank output.
        out << QStringLiteral("%1  %2  %3  %4  %5  %6  %7\n")
                   .arg(printableLabel(i.id, 64), -36)
                   .arg(printableLabel(i.name, 32), -16)
                   .arg(stateText(i), -10)
                   .arg(i.worldSize, 5)
                   .arg(CliUtil::formatTime(i.createdUs), -19)
                   .arg(SyncManifest::formatSize(RunPrune::diskBytes(i.directory)), 10)
                   .arg(printableLabel(i.rootCause.isEmpty() && !i.slow.isEmpty()
                                           ? CliUtil::tr("slow: %1").arg(i.slow)
                                           : i.rootCause,
                                       200));
        // A big run whose ranks did not all end alike gets a second line of ranges; a small
        // one's `show` lists its few ranks.
        if (i.rankGroups > 1 && i.worldSize > RankOutput::MaxRanksEach)
            out << QStringLiteral("    ") << i.rankSummary << '\n';
    }
    for (const BrokenRun &b : broken) {
        out << QStringLiteral("%1  %2  %3\n")
                   .arg(printableLabel(b.id, 64), -36)
                   .arg(QString(), -16)
                   .arg(CliUtil::tr("BROKEN: %1").arg(printableLabel(b.problem, 300)));
    }
    out.flush();
    return ExitOk;
}

int RunCommands::printArtifacts(const RunRecord &record)
{
    const QStringList files = record.artifacts();
    if (files.isEmpty()) {
        CliUtil::err() << CliUtil::tr("rankdeck-cli: run %1 has no batch script (not a Slurm run)")
                              .arg(record.id())
                       << '\n';
        return ExitFailed;
    }
    QTextStream &out = CliUtil::out();
    for (const QString &file : files) {
        QFile f(record.directory() + QLatin1Char('/') + file);
        if (!f.open(QIODevice::ReadOnly)) {
            CliUtil::err() << CliUtil::tr("rankdeck-cli: cannot read %1: %2")
                                  .arg(f.fileName(), f.errorString())
                           << '\n';
            return ExitFailed;
        }
        if (files.size() > 1)
            out << QStringLiteral("==> %1 <==\n").arg(file);
        out << QString::fromUtf8(f.readAll());
    }
    out.flush();
    return ExitOk;
}

int RunCommands::show(const QStringList &args)
{
    QCommandLineParser parser;
    parser.addPositionalArgument(QStringLiteral("RUN"), CliUtil::tr("Run id or name."));
    const QCommandLineOption scriptOpt(
        QStringLiteral("script"),
        CliUtil::tr("Print the batch script(s) a Slurm run submitted, exactly as they ran."));
    const QCommandLineOption jsonOpt(
        QStringLiteral("json"),
        CliUtil::tr("Print the run as JSON: its state.json, its failure report and the collective "
                    "verdict."));
    const QCommandLineOption allRanksOpt(
        QStringLiteral("all-ranks"),
        CliUtil::tr("Print one line per rank. Without it, a run of more than %1 ranks prints ranks "
                    "that are alike as ranges (\"ranks 0–16, 18–511 finished\").")
            .arg(RankOutput::MaxRanksEach));
    const QCommandLineOption whySlowOpt(
        QStringLiteral("why-slow"),
        CliUtil::tr("Print why the job is slow: the straggler, its cause, and for every rank where "
                    "its time goes (sampled stacks) and its /proc evidence."));
    parser.addOptions({scriptOpt, jsonOpt, allRanksOpt, whySlowOpt});
    int code = 0;
    if (!CliUtil::parse(
            parser, args,
            CliUtil::tr(
                "Show a run: state, timings, per-rank results, root cause and failure report."),
            &code))
        return code;
    if (!oneRunArgument(parser, args.value(0), &code))
        return code;
    RunRecord record;
    if (!CliUtil::openRun(parser.positionalArguments().constFirst(), &record, &code))
        return code;
    const RunInfo info = record.info();
    const QJsonObject state = record.readState();
    QTextStream &out = CliUtil::out();
    if (parser.isSet(scriptOpt))
        return printArtifacts(record);
    if (parser.isSet(jsonOpt)) {
        out << QJsonDocument(CollectiveOutput::showJson(record, state)).toJson();
        out.flush();
        return ExitOk;
    }
    // Why the ranks are stuck comes first: it is what a hung run's reader came for.
    CollectiveOutput::print(out, record, state, parser.isSet(allRanksOpt));
    out << CliUtil::tr("Run:       %1").arg(info.id) << '\n';
    out << CliUtil::tr("Name:      %1").arg(printableLabel(info.name)) << '\n';
    // A run made by another RankDeck may be read differently than it was written (or by an older
    // parser), so the reader is told which one made it.
    if (BuildVersion::isOther(record.launcherVersion(), record.launcherCommit()))
        out << CliUtil::tr("Version:   made by RankDeck %1; this is %2")
                   .arg(printableLabel(BuildVersion::describe(record.launcherVersion(),
                                                              record.launcherCommit()),
                                       100),
                        BuildVersion::describe())
            << '\n';
    out << CliUtil::tr("Profile:   %1 (%2, %3 node(s))")
               .arg(record.profile().name, record.profile().transport)
               .arg(record.profile().nodes.size())
        << '\n';
    if (record.config().isProgram())
        out << CliUtil::tr("Program:   %1")
                   .arg(printableLabel(record.config().program.join(QLatin1Char(' ')), 4000))
            << '\n';
    else
        out << CliUtil::tr("Worker:    %1")
                   .arg(
                       printableLabel(record.config().workerArguments.join(QLatin1Char(' ')), 4000))
            << '\n';
    if (!record.config().syncDirectory.isEmpty())
        out << CliUtil::tr("Synced:    %1").arg(record.config().syncDirectory) << '\n';
    if (!record.config().tensorBoardDir.isEmpty())
        out << CliUtil::tr("Logdir:    %1 (TensorBoard event files followed)")
                   .arg(printableLabel(record.config().tensorBoardDir))
            << '\n';
    for (const QString &file : record.artifacts())
        out << CliUtil::tr("Kept:      %1 (show --script prints it)").arg(file) << '\n';
    out << CliUtil::tr("State:     %1").arg(stateText(info)) << '\n';
    const qint64 started = state.value(QStringLiteral("started_us")).toInteger();
    const qint64 ended = state.value(QStringLiteral("ended_us")).toInteger();
    out << CliUtil::tr("Started:   %1").arg(CliUtil::formatTime(started)) << '\n';
    if (ended > 0)
        out << CliUtil::tr("Ended:     %1 (%2)")
                   .arg(CliUtil::formatTime(ended), CliUtil::formatDuration(ended - started))
            << '\n';
    if (state.value(QStringLiteral("max_restarts")).toInt() > 0)
        out << CliUtil::tr("Attempts:  %1 of %2")
                   .arg(info.attempt + 1)
                   .arg(state.value(QStringLiteral("max_restarts")).toInt() + 1)
            << '\n';
    if (state.value(QStringLiteral("hung")).toBool())
        out << CliUtil::tr("Flagged:   hung (ranks made no progress)") << '\n';
    if (!info.rootCause.isEmpty())
        out << CliUtil::tr("Root cause: %1").arg(printableLabel(info.rootCause, 1000)) << '\n';
    out << CliUtil::tr("Directory: %1").arg(info.directory) << '\n';
    // What the ranks' own timestamps (and so the root cause) were corrected by.
    const QMap<int, NodeClock> clocks = RunStateFile::fromJson(state).clocks;
    for (auto it = clocks.cbegin(); it != clocks.cend(); ++it) {
        const QList<ProfileNode> &nodes = record.profile().nodes;
        const QString host = it.key() < nodes.size() ? nodes[it.key()].host : QString();
        out << (it == clocks.cbegin() ? CliUtil::tr("Clocks:    ") : QStringLiteral("           "))
            << CliUtil::tr("node %1 (%2): %3").arg(it.key()).arg(host, it->describe()) << '\n';
    }
    out << '\n' << CliUtil::tr("Ranks:") << '\n';
    QHash<int, QString> hosts;
    QList<RankStatus> ranks;
    for (const QJsonArray items = state.value(QStringLiteral("ranks")).toArray();
         const auto &v : items) {
        ranks << RankStatus::fromJson(v.toObject());
        hosts.insert(ranks.constLast().rank, ranks.constLast().host);
    }
    if (parser.isSet(allRanksOpt) || ranks.size() <= RankOutput::MaxRanksEach)
        RankOutput::printEach(out, ranks, info.state, RunVerdictFacts::fromStateJson(state));
    else
        RankOutput::printGrouped(out, ranks);
    // Who slows the others down, from the recorded step times (read only: the run may still
    // be appending to its metrics.csv).
    {
        MetricsStore metrics;
        QString ignored; // a bad row loses only itself here; `export` names it
        // The report reads the last StragglerReport::kWindow steps: the file's tail holds them
        // (16 MiB: 100 steps of 512 ranks' step metrics), however long the run.
        CliUtil::loadRecentMetrics(info.directory, &metrics, &ignored,
                                   {metric::StepTimeMs, metric::CommWaitMs},
                                   qint64(16) * 1024 * 1024);
        const QString straggler = StragglerReport::analyze(metrics, hosts).text();
        if (!straggler.isEmpty())
            out << '\n' << CliUtil::tr("Step time: %1").arg(straggler) << '\n';
    }
    SlowOutput::print(out, state, parser.isSet(whySlowOpt), record.config().isProgram());
    const QJsonArray attempts = state.value(QStringLiteral("attempts")).toArray();
    for (const auto &v : attempts) {
        const QJsonObject a = v.toObject();
        out << '\n'
            << CliUtil::tr("Attempt %1 failed: %2")
                   .arg(a.value(QStringLiteral("attempt")).toInt() + 1)
                   .arg(printableLabel(a.value(QStringLiteral("root_cause_summary")).toString(),
                                       1000))
            << '\n';
    }
    // Each rank's last dump; past MaxRanksEach ranks, ranks whose dumps say the same (reason
    // and where they wait) are one entry: 512 ranks hung in one all_reduce are one place.
    struct StackEntry
    {
        QList<int> ranks;
        qint64 latestUs = 0;
        QString reason;
        QStringList where;
    };
    QList<StackEntry> stackEntries;
    QHash<QString, qsizetype> stackEntryOf;
    const bool groupStacks =
        info.worldSize > RankOutput::MaxRanksEach && !parser.isSet(allRanksOpt);
    for (int r = 0; r < info.worldSize; ++r) {
        qint64 t = 0;
        QString reason, body;
        if (!CollectiveOutput::lastStackDump(record.stacksPath(r), &t, &reason, &body))
            continue;
        const QStringList where = whereRankWaits(RankStackDump::split(body));
        const QString key = reason + QChar(0x1f) + where.join(QChar(0x1f));
        if (const qsizetype at = groupStacks ? stackEntryOf.value(key, -1) : -1; at >= 0) {
            stackEntries[at].ranks << r;
            stackEntries[at].latestUs = std::max(stackEntries[at].latestUs, t);
            continue;
        }
        stackEntryOf.insert(key, stackEntries.size());
        stackEntries.append({{r}, t, reason, where});
    }
    if (!stackEntries.isEmpty())
        out << '\n'
            << CliUtil::tr("Last stack dumps (rankdeck-cli stacks RUN for the full stacks):")
            << '\n';
    for (const StackEntry &e : std::as_const(stackEntries)) {
        const QString whom = e.ranks.size() == 1
                                 ? CliUtil::tr("rank %1").arg(e.ranks.first())
                                 : CliUtil::tr("ranks %1").arg(RankGroups::ranges(e.ranks, 8));
        out << CliUtil::tr("  %1 at %2 (%3):").arg(whom, CliUtil::formatTime(e.latestUs), e.reason)
            << '\n';
        for (const QString &line : e.where)
            out << QStringLiteral("    ") << line << '\n';
    }
    // failure.txt quotes the ranks' own output (tracebacks, messages).
    const QString failure = printableLines(record.readFailureText());
    if (!failure.isEmpty())
        out << '\n' << failure << (failure.endsWith(QLatin1Char('\n')) ? "" : "\n");
    out.flush();
    return ExitOk;
}

int RunCommands::logs(const QStringList &args)
{
    QCommandLineParser parser;
    const QCommandLineOption rankOpt(QStringLiteral("rank"),
                                     CliUtil::tr("Only this rank (without prefix)."),
                                     QStringLiteral("N"));
    const QCommandLineOption followOpt({QStringLiteral("f"), QStringLiteral("follow")},
                                       CliUtil::tr("Keep printing new lines until the run ends."));
    const QCommandLineOption rawOpt(
        QStringLiteral("raw"),
        CliUtil::tr("Print the ranks' bytes exactly as they wrote them: escape sequences, control "
                    "characters, every redraw and whole long lines (for a pipe; a rank's escape "
                    "sequences act on a terminal)."));
    parser.addOptions({rankOpt, followOpt, rawOpt});
    parser.addPositionalArgument(QStringLiteral("RUN"), CliUtil::tr("Run id or name."));
    int code = 0;
    if (!CliUtil::parse(parser, args,
                        CliUtil::tr("Print a run's log lines from its record (all ranks merged in "
                                    "arrival order, prefixed [rN])."),
                        &code))
        return code;
    if (!oneRunArgument(parser, args.value(0), &code))
        return code;
    int rank = LogStore::AllRanks;
    if (parser.isSet(rankOpt) && !CliUtil::parseInt(parser.value(rankOpt), 0, 1 << 20, &rank))
        return CliUtil::usageError(
            CliUtil::tr("--rank: \"%1\" is not a rank number").arg(parser.value(rankOpt)),
            args.value(0));
    RunRecord record;
    if (!CliUtil::openRun(parser.positionalArguments().constFirst(), &record, &code))
        return code;
    const QString dir = record.directory();
    QString error;
    QTextStream &out = CliUtil::out();
    const int worldSize = std::max(record.info().worldSize, 1);
    if (rank != LogStore::AllRanks && rank >= worldSize) {
        CliUtil::err() << CliUtil::tr("rankdeck-cli: --rank %1: the run has ranks 0 to %2")
                              .arg(rank)
                              .arg(worldSize - 1)
                       << '\n';
        return ExitUsage;
    }
    const bool raw = parser.isSet(rawOpt);
    if (!parser.isSet(followOpt)) {
        LogStore store;
        if (!store.open(dir, &error)) {
            CliUtil::err() << QStringLiteral("rankdeck-cli: ") << error << '\n';
            return ExitFailed;
        }
        QFile rawOut;
        if (raw && !rawOut.open(stdout, QIODevice::WriteOnly))
            return ExitFailed;
        const qint64 total = store.lineCount(rank);
        for (qint64 first = 0; first < total; first += 10000) {
            const QList<LogLine> lines = store.readLines(rank, first, 10000, &error);
            for (const LogLine &l : lines) {
                if (raw) {
                    // The record's bytes as they came, every redraw included.
                    if (rank == LogStore::AllRanks)
                        rawOut.write(QStringLiteral("[r%1] ").arg(l.rank).toUtf8());
                    rawOut.write(store.readRawLine(l.rank, l.number, &error) + '\n');
                    continue;
                }
                if (l.overdrawn)
                    continue; // what a terminal draws over (a nested progress bar's redraw)
                if (rank == LogStore::AllRanks)
                    out << QStringLiteral("[r%1] ").arg(l.rank);
                out << l.text << '\n';
            }
            if (lines.isEmpty())
                break;
        }
        out.flush();
        rawOut.flush();
        if (!error.isEmpty()) {
            CliUtil::err() << QStringLiteral("rankdeck-cli: ") << error << '\n';
            return ExitFailed;
        }
        return ExitOk;
    }
    // Follow: tail the rank files another process is appending to, until the run has ended and
    // everything is printed. Bounded: a rank that writes faster than this prints, or a line
    // that never ends, costs at most a chunk and a line's head (LogFollower).
    QList<qint64> offsets(worldSize, 0);
    QList<LogFollower> followers(worldSize, LogFollower(raw));
    QList<bool> midLine(worldSize, false); // raw: a piece of a long line went out already
    QFile rawOut;
    if (raw && !rawOut.open(stdout, QIODevice::WriteOnly))
        return ExitFailed;
    QList<LogFollower::Line> lines;
    auto print = [&](int r) {
        for (const LogFollower::Line &l : std::as_const(lines)) {
            if (raw) {
                if (rank == LogStore::AllRanks && !midLine[r])
                    rawOut.write(QStringLiteral("[r%1] ").arg(r).toUtf8());
                rawOut.write(l.raw);
                if (l.complete)
                    rawOut.write("\n", 1);
                midLine[r] = !l.complete;
                continue;
            }
            if (rank == LogStore::AllRanks)
                out << QStringLiteral("[r%1] ").arg(r);
            out << l.text << '\n';
        }
        lines.clear();
    };
    for (;;) {
        const RunInfo info = record.info();
        const bool ended = isTerminal(info.state) || info.launcherGone;
        for (int r = 0; r < worldSize; ++r) {
            if (rank != LogStore::AllRanks && r != rank)
                continue;
            // Its oldest bytes may be in compressed segments already (a long run).
            CompactedFile f(dir + QStringLiteral("/rank-%1.log").arg(r));
            if (!f.open() || f.size() <= offsets[r])
                continue;
            // Up to what the file held when this turn began, a chunk at a time.
            for (qint64 left = f.size() - offsets[r]; left > 0;) {
                const QByteArray chunk =
                    f.read(offsets[r], qMin(left, LogFollower::kReadChunk), &error);
                if (!error.isEmpty()) {
                    CliUtil::err() << QStringLiteral("rankdeck-cli: ") << error << '\n';
                    return ExitFailed;
                }
                if (chunk.isEmpty())
                    break;
                offsets[r] += chunk.size();
                left -= chunk.size();
                followers[r].feed(chunk, lines);
                print(r);
            }
        }
        if (ended) {
            // The run is over: a last line without its newline is all there will be of it.
            for (int r = 0; r < worldSize; ++r) {
                followers[r].finish(lines);
                print(r);
            }
        }
        out.flush();
        rawOut.flush();
        if (ended)
            break;
        QThread::msleep(200);
    }
    return ExitOk;
}

int RunCommands::stop(const QStringList &args)
{
    QCommandLineParser parser;
    const QCommandLineOption waitOpt(
        QStringLiteral("timeout"), CliUtil::tr("Seconds to wait for the run to end (default 20)."),
        QStringLiteral("SEC"), QStringLiteral("20"));
    parser.addOption(waitOpt);
    parser.addPositionalArgument(QStringLiteral("RUN"), CliUtil::tr("Run id or name."));
    int code = 0;
    if (!CliUtil::parse(
            parser, args,
            CliUtil::tr(
                "Stop a running run (stop command, then SIGTERM, then SIGKILL to every rank)."),
            &code))
        return code;
    if (!oneRunArgument(parser, args.value(0), &code))
        return code;
    int timeout = 20;
    if (!CliUtil::parseInt(parser.value(waitOpt), 1, 3600, &timeout))
        return CliUtil::usageError(
            CliUtil::tr("--timeout: \"%1\" is not a number of seconds").arg(parser.value(waitOpt)),
            args.value(0));
    RunRecord record;
    if (!CliUtil::openRun(parser.positionalArguments().constFirst(), &record, &code))
        return code;
    QString error;
    RunInfo info = record.info();
    QTextStream &out = CliUtil::out();
    if (isTerminal(info.state)) {
        out << CliUtil::tr("run %1 already ended: %2").arg(info.id, runStateName(info.state))
            << '\n';
        return ExitOk;
    }
    if (info.launcherGone) {
        // Nobody owns the ranks any more: end the local ones by their process groups.
        int killed = 0;
        const QJsonObject state = record.readState();
        if (record.profile().isLocal()) {
            for (const QJsonArray items = state.value(QStringLiteral("ranks")).toArray();
                 const auto &v : items) {
                const QJsonObject rank = v.toObject();
                const ProcessIdentity id{rank.value(QStringLiteral("pid")).toInteger(),
                                         rank.value(QStringLiteral("pid_start")).toInteger()};
                // Only the process the record names (its start time as recorded; a record
                // without one: a process that still carries this run's id), pids get reused.
                const auto carriesRunId = [&](qint64 pid) {
                    QFile environ(QStringLiteral("/proc/%1/environ").arg(pid));
                    return environ.open(QIODevice::ReadOnly) &&
                           environ.readAll().split('\0').contains("RANKDECK_RUN_ID=" +
                                                                  info.id.toUtf8());
                };
                if (signalRecordedProcess(id, SIGKILL, SignalTarget::Group, carriesRunId))
                    ++killed;
            }
        }
        QJsonObject s = state;
        s[QStringLiteral("state")] = runStateName(RunState::Stopped);
        s[QStringLiteral("ended_us")] = QDateTime::currentMSecsSinceEpoch() * 1000;
        s[QStringLiteral("error")] = CliUtil::tr("the launcher ended without finishing the record");
        record.writeState(s);
        record.releaseReserve();
        out << CliUtil::tr("run %1: its launcher is gone; killed %2 leftover rank process group(s) "
                           "and marked it stopped")
                   .arg(info.id)
                   .arg(killed)
            << '\n';
        return ExitOk;
    }
    if (!record.requestStop(&error)) {
        CliUtil::err() << QStringLiteral("rankdeck-cli: ") << error << '\n';
        return ExitFailed;
    }
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < qint64(timeout) * 1000) {
        info = record.info();
        if (isTerminal(info.state) || info.launcherGone)
            break;
        QThread::msleep(200);
    }
    if (!isTerminal(info.state)) {
        CliUtil::err()
            << CliUtil::tr("rankdeck-cli: run %1 did not end within %2 s").arg(info.id).arg(timeout)
            << '\n';
        return ExitFailed;
    }
    out << CliUtil::tr("run %1: %2").arg(info.id, runStateName(info.state)) << '\n';
    return ExitOk;
}

bool RunCommands::extractFromRecord(const QString &dir, const QList<MetricPattern> &patterns,
                                    MetricsStore *store, QString *error)
{
    LogStore logs;
    if (!logs.open(dir, error))
        return false;
    LogMetricExtractor extractor;
    extractor.setDefaultPatternsEnabled(false);
    extractor.setUserPatterns(patterns);
    constexpr int kChunk = 4096;
    for (int rank : logs.ranks()) {
        const qint64 n = logs.lineCount(rank);
        for (qint64 first = 0; first < n; first += kChunk) {
            const QList<LogLine> lines = logs.readLines(rank, first, kChunk, error);
            if (lines.isEmpty() && !error->isEmpty())
                return false;
            for (const LogLine &line : lines) {
                for (const LogMetricExtractor::Point &p :
                     extractor.extract(rank, line.text, line.overdrawn))
                    store->append(rank, p.name, p.step, line.timeUs, p.value, p.basis);
            }
        }
    }
    logs.close();
    return true;
}

int RunCommands::exportRun(const QStringList &args)
{
    QCommandLineParser parser;
    const QCommandLineOption csvOpt(
        QStringLiteral("csv"),
        CliUtil::tr("Write every metric point (full resolution) to FILE ('-': stdout)."),
        QStringLiteral("FILE"));
    const QCommandLineOption metricOpt(
        QStringLiteral("metric"),
        CliUtil::tr("Also export NAME, extracted now from the recorded lines that REGEX matches "
                    "(one capture group: the value; x from step/iter/epoch in the line, else the "
                    "count). Repeatable."),
        QStringLiteral("NAME=REGEX"));
    const QCommandLineOption tensorBoardOpt(
        QStringLiteral("tensorboard"),
        CliUtil::tr("Write TensorBoard event files into DIR, one sub-directory per rank "
                    "(rank-N/), every point at full resolution with the ranks' wall times "
                    "(tensorboard --logdir DIR --samples_per_plugin scalars=0 shows all of "
                    "them)."),
        QStringLiteral("DIR"));
    const QCommandLineOption flightRecorderOpt(
        QStringLiteral("flight-recorder"),
        CliUtil::tr("Write the newest flight-recorder collection's dumps (torch's pickles) into "
                    "DIR as rank_<r>, for torch's analyser: torchfrtrace DIR --prefix rank_."),
        QStringLiteral("DIR"));
    const QCommandLineOption collectionOpt(
        QStringLiteral("collection"),
        CliUtil::tr("--flight-recorder: this collection (flight-recorder/ID in the record) instead "
                    "of the newest."),
        QStringLiteral("ID"));
    parser.addOptions({csvOpt, tensorBoardOpt, metricOpt, flightRecorderOpt, collectionOpt});
    parser.addPositionalArgument(QStringLiteral("RUN"), CliUtil::tr("Run id or name."));
    int code = 0;
    if (!CliUtil::parse(parser, args,
                        CliUtil::tr("Export a run's metrics, or its flight-recorder dumps."),
                        &code))
        return code;
    if (!oneRunArgument(parser, args.value(0), &code))
        return code;
    if (parser.isSet(flightRecorderOpt)) {
        int id = 0;
        if (parser.isSet(collectionOpt) &&
            !CliUtil::parseInt(parser.value(collectionOpt), 1, INT_MAX, &id))
            return CliUtil::usageError(CliUtil::tr("--collection: \"%1\" is not a collection id")
                                           .arg(parser.value(collectionOpt)),
                                       args.value(0));
        RunRecord record;
        if (!CliUtil::openRun(parser.positionalArguments().constFirst(), &record, &code))
            return code;
        QString summary, error;
        if (!CollectiveOutput::exportPickles(record, id, parser.value(flightRecorderOpt), &summary,
                                             &error)) {
            CliUtil::err() << QStringLiteral("rankdeck-cli: ") << error << '\n';
            return ExitFailed;
        }
        CliUtil::err() << summary << '\n';
        return ExitOk;
    }
    if (parser.isSet(collectionOpt))
        return CliUtil::usageError(CliUtil::tr("--collection needs --flight-recorder DIR"),
                                   args.value(0));
    if (!parser.isSet(csvOpt) && !parser.isSet(tensorBoardOpt))
        return CliUtil::usageError(
            CliUtil::tr("missing --csv FILE, --tensorboard DIR or --flight-recorder DIR"),
            args.value(0));
    QList<MetricPattern> patterns;
    for (const QString &spec : parser.values(metricOpt)) {
        MetricPattern p;
        QString patternError;
        if (!parseMetricPattern(spec, &p, &patternError))
            return CliUtil::usageError(patternError, args.value(0));
        patterns << p;
    }
    // The same check as show: a directory whose run.json is garbage is no run to export.
    RunRecord record;
    if (!CliUtil::openRun(parser.positionalArguments().constFirst(), &record, &code))
        return code;
    const QString dir = record.directory();
    MetricsStore store;
    QString error;
    if (!store.open(dir, &error)) {
        CliUtil::err() << QStringLiteral("rankdeck-cli: ") << error << '\n';
        return ExitFailed;
    }
    store.close();
    // The patterns run over the record's lines now, so curves can be defined after the run.
    // Points go to this in-memory store only (it is closed): the record stays as it was.
    for (const MetricPattern &p : std::as_const(patterns)) {
        if (store.metricNames().contains(p.name))
            return CliUtil::usageError(
                CliUtil::tr("--metric %1: the record has a metric of that name already; pick "
                            "another name")
                    .arg(p.name),
                args.value(0));
    }
    if (!patterns.isEmpty() && !extractFromRecord(dir, patterns, &store, &error)) {
        CliUtil::err() << QStringLiteral("rankdeck-cli: ") << error << '\n';
        return ExitFailed;
    }
    if (parser.isSet(tensorBoardOpt)) {
        QHash<int, QString> hosts;
        for (const QJsonArray items = record.readState().value(QStringLiteral("ranks")).toArray();
             const auto &v : items) {
            const RankStatus s = RankStatus::fromJson(v.toObject());
            hosts.insert(s.rank, s.host);
        }
        const QString target = parser.value(tensorBoardOpt);
        TensorBoardExport::Result result;
        if (!TensorBoardExport::write(store, target, hosts, &result, &error)) {
            CliUtil::err() << QStringLiteral("rankdeck-cli: ") << error << '\n';
            return ExitFailed;
        }
        CliUtil::err() << CliUtil::tr("%1 points of %2 rank(s) written to %3 (tensorboard --logdir "
                                      "%3)")
                              .arg(result.points)
                              .arg(result.ranks)
                              .arg(target)
                       << '\n';
        if (!parser.isSet(csvOpt))
            return ExitOk;
    }
    bool ok;
    const QString target = parser.value(csvOpt);
    if (target == QLatin1String("-")) {
        QFile out;
        out.open(stdout, QIODevice::WriteOnly);
        ok = CsvExport::write(store, &out, &error);
    } else {
        ok = CsvExport::write(store, target, &error);
    }
    if (!ok) {
        CliUtil::err() << QStringLiteral("rankdeck-cli: ") << error << '\n';
        return ExitFailed;
    }
    if (target != QLatin1String("-"))
        CliUtil::err()
            << CliUtil::tr("%1 points written to %2").arg(store.totalPoints()).arg(target) << '\n';
    return ExitOk;
}

int RunCommands::stacks(const QStringList &args)
{
    QCommandLineParser parser;
    const QCommandLineOption rankOpt(QStringLiteral("rank"), CliUtil::tr("Only this rank."),
                                     QStringLiteral("N"));
    const QCommandLineOption waitOpt(QStringLiteral("timeout"),
                                     CliUtil::tr("Seconds to wait for the answers (default 10)."),
                                     QStringLiteral("SEC"), QStringLiteral("10"));
    const QCommandLineOption lastOpt(
        QStringLiteral("last"),
        CliUtil::tr("Print the last recorded dumps, do not ask the ranks."));
    parser.addOptions({rankOpt, waitOpt, lastOpt});
    parser.addPositionalArgument(QStringLiteral("RUN"), CliUtil::tr("Run id or name."));
    int code = 0;
    if (!CliUtil::parse(parser, args,
                        CliUtil::tr("Ask a running run's ranks for every thread's stack, without "
                                    "stopping them, and print them."),
                        &code))
        return code;
    if (!oneRunArgument(parser, args.value(0), &code))
        return code;
    int rank = -1;
    if (parser.isSet(rankOpt) && !CliUtil::parseInt(parser.value(rankOpt), 0, 1 << 20, &rank))
        return CliUtil::usageError(
            CliUtil::tr("--rank: \"%1\" is not a rank number").arg(parser.value(rankOpt)),
            args.value(0));
    int timeout = 10;
    if (!CliUtil::parseInt(parser.value(waitOpt), 1, 3600, &timeout))
        return CliUtil::usageError(
            CliUtil::tr("--timeout: \"%1\" is not a number of seconds").arg(parser.value(waitOpt)),
            args.value(0));
    RunRecord record;
    if (!CliUtil::openRun(parser.positionalArguments().constFirst(), &record, &code))
        return code;
    QString error;
    const RunInfo info = record.info();
    QList<int> ranks;
    for (int r = 0; r < info.worldSize; ++r)
        if (rank < 0 || r == rank)
            ranks << r;
    auto dumpTime = [&](int r) {
        qint64 t = 0;
        QString reason, body;
        return CollectiveOutput::lastStackDump(record.stacksPath(r), &t, &reason, &body)
                   ? t
                   : qint64(0);
    };
    if (!parser.isSet(lastOpt)) {
        if (isTerminal(info.state) || info.launcherGone) {
            CliUtil::err() << CliUtil::tr("rankdeck-cli: run %1 is not running (%2); use --last "
                                          "for its recorded dumps")
                                  .arg(info.id, runStateName(info.state))
                           << '\n';
            return ExitFailed;
        }
        QHash<int, qint64> before;
        for (int r : ranks)
            before.insert(r, dumpTime(r));
        const qint64 collectionBefore = CollectiveOutput::newestCollection(record);
        if (!record.requestStackDump(&error)) {
            CliUtil::err() << QStringLiteral("rankdeck-cli: ") << error << '\n';
            return ExitFailed;
        }
        QElapsedTimer t;
        t.start();
        for (;;) {
            bool all = true;
            for (int r : ranks)
                all = all && dumpTime(r) > before.value(r);
            if (all || t.elapsed() > qint64(timeout) * 1000)
                break;
            QThread::msleep(100);
        }
        // The launcher collects the flight recorders with the stacks: their verdict comes
        // first in what is printed.
        for (bool verdict = false; t.elapsed() <= qint64(timeout) * 1000; QThread::msleep(100))
            if (CollectiveOutput::newestCollection(record, &verdict) > collectionBefore && verdict)
                break;
    }
    QTextStream &out = CliUtil::out();
    if (rank < 0)
        CollectiveOutput::print(out, record, record.readState());
    int printed = 0;
    for (int r : ranks) {
        qint64 t = 0;
        QString reason, body;
        if (!CollectiveOutput::lastStackDump(record.stacksPath(r), &t, &reason, &body)) {
            out << CliUtil::tr("rank %1: no stack dump").arg(r) << '\n';
            continue;
        }
        ++printed;
        out << CliUtil::tr("=== rank %1, %2 (%3)").arg(r).arg(CliUtil::formatTime(t), reason)
            << '\n';
        for (const QString &line : whereRankWaits(RankStackDump::split(body)))
            out << QStringLiteral("  ") << line << '\n';
        out << body << "\n\n";
    }
    out.flush();
    return printed == ranks.size() ? ExitOk : ExitFailed;
}

} // namespace rankdeck::cli
