// SPDX-License-Identifier: GPL-3.0-or-later
//
// The flags of `rankdeck-cli launch` (and the follow flags it shares with `attach`), and how they
// become a launch: the profile with what the flags override, the flag combinations only a
// command line can get wrong, and a LaunchRequest, whose rules (core/config/launchrequest.h) are
// the ones the launch dialog applies too. Each step prints its own usage error and gives the
// exit status, so that LaunchCommand::run() reads as the sequence of steps.
#pragma once

#include "cliutil.h"
#include "config/launchrequest.h"
#include "config/profile.h"
#include "run/runcontroller.h"

#include <QCommandLineOption>
#include <QStringList>

#include <optional>

class QCommandLineParser;

namespace rankdeck::cli {

// What every command that follows a run on the terminal (launch, attach) takes.
struct FollowOptions
{
    QCommandLineOption ranks{
        QStringLiteral("ranks"),
        CliUtil::tr("Print only these ranks' lines, e.g. 0,3 (all are recorded)."),
        QStringLiteral("LIST")};
    QCommandLineOption accept{
        QStringLiteral("accept-new-host-keys"),
        CliUtil::tr("Trust and remember unknown SSH host keys (never changed ones).")};
    QCommandLineOption quiet{QStringLiteral("quiet"),
                             CliUtil::tr("Do not print the ranks' lines, only the summary.")};
    QCommandLineOption noProgress{QStringLiteral("no-progress"),
                                  CliUtil::tr("No live progress line.")};
};

// The command line split at its first "--": everything after it belongs to the worker or the
// user's program, untouched.
struct SplitArguments
{
    static SplitArguments of(const QStringList &args);

    QStringList own;
    QStringList afterDashes;
    bool hasDashes = false;
};

// Every flag of `launch`. Each step returns std::nullopt when it went through, else the exit
// status (the message is printed).
struct LaunchFlags
{
    LaunchFlags();

    void addTo(QCommandLineParser *parser) const;
    // The profile the run uses, with what --nproc-per-node, --gpus-per-node,
    // --heartbeat-timeout and --hang-timeout override.
    std::optional<int> loadProfile(const QCommandLineParser &parser, const QString &cmd,
                                   Profile *out, RunController::Options *options) const;
    // What only the command line can get wrong (which flags need --exec, what goes after --).
    std::optional<int> checkCombinations(const QCommandLineParser &parser,
                                         const QStringList &afterDashes, const QString &cmd) const;
    // The flags as a LaunchRequest, checked by its rules.
    std::optional<int> request(const QCommandLineParser &parser, const QStringList &afterDashes,
                               const QString &cmd, LaunchRequest *out) const;

    QCommandLineOption profile{QStringLiteral("profile"),
                               CliUtil::tr("Cluster profile (default: local)."),
                               QStringLiteral("NAME"), QStringLiteral("local")};
    QCommandLineOption nproc{QStringLiteral("nproc-per-node"),
                             CliUtil::tr("Ranks per node (overrides the profile)."),
                             QStringLiteral("N")};
    QCommandLineOption gpus{QStringLiteral("gpus-per-node"),
                            CliUtil::tr("GPUs per node (overrides the profile; 0: CPU only)."),
                            QStringLiteral("N")};
    QCommandLineOption name{QStringLiteral("name"), CliUtil::tr("Run name (default: the task)."),
                            QStringLiteral("NAME")};
    QCommandLineOption detach{QStringLiteral("detach"),
                              CliUtil::tr("Start the run in the background and print its id.")};
    QCommandLineOption restarts{
        QStringLiteral("max-restarts"),
        CliUtil::tr("Restart the whole gang up to N times after a failure (from the last "
                    "checkpoint with --checkpoint-dir)."),
        QStringLiteral("N"), QStringLiteral("0")};
    QCommandLineOption worker{QStringLiteral("worker"),
                              CliUtil::tr("Worker binary (default: $RANKDECK_WORKER, else "
                                          "the one installed with this program)."),
                              QStringLiteral("PATH")};
    QCommandLineOption heartbeat{
        QStringLiteral("heartbeat-timeout"),
        CliUtil::tr("Flag a rank silent after SEC without heartbeat (overrides the profile)."),
        QStringLiteral("SEC")};
    QCommandLineOption hang{
        QStringLiteral("hang-timeout"),
        CliUtil::tr("Flag the run hung after SEC without progress: with --exec, no output and no "
                    "new metric while the process lives; for the worker, no new step while its "
                    "heartbeats go on (default: the heartbeat timeout, and with --exec at least "
                    "3× the program's longest quiet gap and 120 s before its first line)."),
        QStringLiteral("SEC")};
    QCommandLineOption exec{
        QStringLiteral("exec"),
        CliUtil::tr("Run your own program on every rank: everything after -- is PROGRAM ARGS "
                    "(a torchrun-style Python script, or any binary).")};
    QCommandLineOption workdir{
        QStringLiteral("workdir"),
        CliUtil::tr("--exec: working directory of the program (default: the current directory "
                    "for local profiles, the home directory on SSH nodes)."),
        QStringLiteral("DIR")};
    QCommandLineOption env{QStringLiteral("env"),
                           CliUtil::tr("--exec: add NAME=VALUE to every rank's "
                                       "environment (repeatable)."),
                           QStringLiteral("NAME=VALUE")};
    QCommandLineOption metric{
        QStringLiteral("metric"),
        CliUtil::tr("--exec: also plot NAME from the lines REGEX matches, its one capture group "
                    "being the value (repeatable; loss, val_loss, lr, acc… are found without)."),
        QStringLiteral("NAME=REGEX")};
    QCommandLineOption tensorBoard{
        QStringLiteral("tensorboard-dir"),
        CliUtil::tr("--exec: where the program writes TensorBoard event files (SummaryWriter); "
                    "their scalars become curves per rank, live. Relative to the program's "
                    "working directory (default: the program's --logdir/--log_dir/--log-dir "
                    "argument, else runs/)."),
        QStringLiteral("DIR")};
    QCommandLineOption sync{
        QStringLiteral("sync"),
        CliUtil::tr("--exec: upload DIR to every node before the run (only files changed since the "
                    "last upload; not .git/ or what .gitignore excludes) and run the program in "
                    "that copy, --workdir being relative to it; PROGRAM and script paths then "
                    "resolve there. Local profiles run in DIR itself."),
        QStringLiteral("DIR")};
    QCommandLineOption warm{
        QStringLiteral("warm"),
        CliUtil::tr("--exec: start a Python program (python SCRIPT or python -m MODULE) from a "
                    "warm interpreter on each node that imported torch already; the first --warm "
                    "launch starts it and runs cold, a program that cannot start warm starts "
                    "cold (the profile's warm_python = true does the same).")};
    QCommandLineOption syncLimit{
        QStringLiteral("sync-limit"),
        CliUtil::tr("--sync: the most DIR may hold, e.g. 500M or 2G (default 200M; 0: no limit)."),
        QStringLiteral("SIZE")};
    QCommandLineOption noFlightRecorder{
        QStringLiteral("no-flight-recorder"),
        CliUtil::tr("Do not record the ranks' collectives with torch's flight recorder (on by "
                    "default; a hang is then explained by the ranks' stacks alone). The "
                    "profile's flight_recorder = false does the same.")};
    QCommandLineOption runId{QStringLiteral("run-id"),
                             CliUtil::tr("Use this run id (internal, for --detach)."),
                             QStringLiteral("ID")};
    FollowOptions follow;
};

} // namespace rankdeck::cli
