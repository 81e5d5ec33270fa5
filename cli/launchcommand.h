// SPDX-License-Identifier: GPL-3.0-or-later
//
// `rankdeck-cli launch`: runs one training run in the foreground, printing every line with a
// rank prefix ([r3] …, like srun -l), a live one-line progress on a terminal and a summary at
// the end (root cause first when the run failed). Ctrl+C stops the ranks in order; a second
// Ctrl+C kills them.
// `launch --detach` with an SSH profile starts the run, waits until every rank has started,
// leaves it running on the nodes and prints its id; `rankdeck-cli attach RUN` takes such a run
// over again and follows it like launch does (same output, same exit status).
#pragma once

#include "record/runstate.h"
#include "run/runcontroller.h"

#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QSet>
#include <QStringList>
#include <QTimer>

#include <memory>

class QCommandLineOption;
class QCommandLineParser;
class QSocketNotifier;

namespace rankdeck {
struct LogLine;
} // namespace rankdeck

namespace rankdeck::cli {

class TerminalSshInteraction;
struct FollowOptions;

class LaunchCommand : public QObject
{
    Q_OBJECT
public:
    explicit LaunchCommand(QObject *parent = nullptr);
    ~LaunchCommand() override;

    int run(const QStringList &args);
    int attach(const QStringList &args);

private:
    int detach(const QStringList &args, const QString &runId);
    // Builds the controller, starts the run and follows it (or detaches once it started).
    int start(const Profile &profile, const TrainingConfig &config,
              const RunController::Options &options);
    // --ranks LIST into *ranks and the console filter; false with a usage error in *code.
    bool parseConsoleRanks(const QCommandLineParser &parser, const QCommandLineOption &option,
                           const QString &cmd, QList<int> *ranks, int *code);
    // Quiet, progress line and host-key policy as the follow options say.
    void followAs(const QCommandLineParser &parser, const FollowOptions &options,
                  bool detachWhenStarted);
    void printLines(const QList<LogLine> &lines);
    void printMessage(const QString &message);
    void drawProgress();
    void clearProgress();
    void printSummary();
    void onSignal();
    void installSignalHandlers();
    // Follows m_controller until it ends (or, with m_detachWhenStarted, detaches).
    int follow();

    RunController *m_controller = nullptr;
    std::unique_ptr<TerminalSshInteraction> m_interaction;
    QSet<int> m_consoleRanks; // empty: all
    bool m_quiet = false;
    bool m_detachWhenStarted = false;
    bool m_progress = false;
    bool m_progressShown = false;
    int m_signals = 0;
    QTimer m_progressTimer;
    QSocketNotifier *m_signalNotifier = nullptr;
};

} // namespace rankdeck::cli
