// SPDX-License-Identifier: GPL-3.0-or-later
//
// rankdeck-cli: the headless front end (scripts, CI, servers without a display). Exit status:
// 0 success (for launch: every rank finished), 1 failure (the run failed or stopped, an
// operation failed), 2 usage error.
#include "cliutil.h"
#include "comparecommand.h"
#include "launchcommand.h"
#include "plotcommand.h"
#include "profilecommand.h"
#include "profilecommands.h"
#include "runcommands.h"
#include "util/buildversion.h"

#include <QApplication>
#include <QCoreApplication>

#include <cstdlib>
#include <cstring>
#include <memory>

using namespace rankdeck::cli;

namespace {
void printUsage(QTextStream &out)
{
    out << CliUtil::tr(
        "Usage: rankdeck-cli COMMAND [OPTIONS]\n"
        "\n"
        "Launch distributed PyTorch training, your own program or RankDeck's libtorch worker,\n"
        "and inspect its runs.\n"
        "\n"
        "Commands:\n"
        "  launch --profile NAME [--nproc-per-node N] [--name NAME] [--detach] --exec -- PROGRAM "
        "ARGS...\n"
        "  launch --profile NAME [--nproc-per-node N] [--name NAME] [--detach] -- WORKER-ARGS...\n"
        "                     start a run and print every rank's lines as [rN] ...: with --exec\n"
        "                     your program on every rank, torchrun-style (python train.py, a\n"
        "                     Lightning, Accelerate or Transformers script, any binary), else\n"
        "                     the worker (-- --task linear --steps 20)\n"
        "                     (--detach on an SSH profile: the ranks go on without this launcher)\n"
        "  attach RUN         re-attach to a detached run and follow it like launch\n"
        "  runs               list recorded runs\n"
        "  show RUN [--why-slow]\n"
        "                     state, timings, per-rank results, root cause, failure report;\n"
        "                     --why-slow: the straggler, its cause and each rank's evidence\n"
        "  logs RUN [--rank N] [--follow] [--raw]\n"
        "                     print a run's log lines (--raw: the ranks' bytes as written)\n"
        "  stop RUN           stop a running run\n"
        "  stacks RUN [--rank N]\n"
        "                     every thread's stack of the ranks, without stopping them\n"
        "  profile RUN [--seconds N] [--ranks LIST]\n"
        "                     every rank's sampled Python stacks for N s, as collapsed stacks\n"
        "                     (flame graphs: flamegraph.pl, speedscope)\n"
        "  export RUN --csv FILE | --tensorboard DIR\n"
        "                     full-resolution metrics as CSV or TensorBoard event files\n"
        "  compare RUN RUN... what differs between runs (flags, profile, size, metrics)\n"
        "  plot RUN [--metric M] [--compare RUN... [--compare-ranks mean|band|all]]\n"
        "       --png FILE|--pdf FILE\n"
        "                     the Loss page's plot as an image, without a display\n"
        "  profiles list|show|check|add|remove\n"
        "                     cluster profiles\n"
        "\n"
        "RUN is a run id or a run name (the newest run of that name).\n"
        "'rankdeck-cli COMMAND --help' describes each command.\n"
        "Exit status: 0 success, 1 failure (a failed run: root cause printed first), 2 usage "
        "error.\n");
    out.flush();
}
} // namespace

int main(int argc, char **argv)
{
    // `plot` draws with widgets (the app's plot code) and needs a QApplication; without a
    // platform given it renders offscreen, so it works over SSH without a display. Every other
    // command stays on QCoreApplication.
    const bool plot = argc > 1 && std::strcmp(argv[1], "plot") == 0;
    if (plot && !qEnvironmentVariableIsSet("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    std::unique_ptr<QCoreApplication> application =
        plot ? std::make_unique<QApplication>(argc, argv)
             : std::make_unique<QCoreApplication>(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("rankdeck-cli"));
    QCoreApplication::setApplicationVersion(rankdeck::BuildVersion::describe());
    const QStringList args = QCoreApplication::arguments();
    const QString command = args.value(1);
    if (command.isEmpty()) {
        printUsage(CliUtil::err());
        return ExitUsage;
    }
    if (command == QLatin1String("--help") || command == QLatin1String("-h") ||
        command == QLatin1String("help")) {
        printUsage(CliUtil::out());
        return ExitOk;
    }
    if (command == QLatin1String("--version") || command == QLatin1String("-V")) {
        CliUtil::out()
            << QStringLiteral("rankdeck-cli %1\n").arg(rankdeck::BuildVersion::describe());
        return ExitOk;
    }
    // Each command parses ["rankdeck-cli COMMAND", its arguments...].
    QStringList rest = args.mid(2);
    rest.prepend(QStringLiteral("rankdeck-cli ") + command);
    if (command == QLatin1String("launch")) {
        LaunchCommand launch;
        return launch.run(rest);
    }
    if (command == QLatin1String("attach")) {
        LaunchCommand attach;
        return attach.attach(rest);
    }
    if (command == QLatin1String("runs"))
        return RunCommands::runs(rest);
    if (command == QLatin1String("show"))
        return RunCommands::show(rest);
    if (command == QLatin1String("logs"))
        return RunCommands::logs(rest);
    if (command == QLatin1String("stop"))
        return RunCommands::stop(rest);
    if (command == QLatin1String("export"))
        return RunCommands::exportRun(rest);
    if (command == QLatin1String("stacks"))
        return RunCommands::stacks(rest);
    if (command == QLatin1String("profile"))
        return ProfileCommand::run(rest);
    if (command == QLatin1String("plot"))
        return PlotCommand::run(rest);
    if (command == QLatin1String("compare"))
        return CompareCommand::run(rest);
    if (command == QLatin1String("profiles")) {
        QStringList p = args.mid(2);
        p.prepend(QStringLiteral("rankdeck-cli profiles"));
        return ProfileCommands::run(p);
    }
    CliUtil::err() << CliUtil::tr("rankdeck-cli: unknown command \"%1\"").arg(command) << '\n';
    printUsage(CliUtil::err());
    return ExitUsage;
}
