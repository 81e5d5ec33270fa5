// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/runmanager.h"

#include "record/runprune.h"
#include "record/runsdirectorywatcher.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QSet>

#include <algorithm>

namespace rankdeck {

RunManager::RunManager(const QString &runsDirectory, QObject *parent)
    : QObject(parent),
      m_runsDirectory(runsDirectory.isEmpty() ? RunRecord::defaultRunsDirectory() : runsDirectory),
      m_watcher(new RunsDirectoryWatcher(m_runsDirectory, this))
{
    connect(m_watcher, &RunsDirectoryWatcher::runsChanged, this, &RunManager::refresh);
    connect(m_watcher, &RunsDirectoryWatcher::runsUpdated, this, &RunManager::updateRecorded);
    m_judgeTimer.setSingleShot(true);
    m_judgeTimer.setInterval(500);
    connect(&m_judgeTimer, &QTimer::timeout, this, &RunManager::judgeDriven);
    // A thousand runs are a thousand run.json and state.json files: the first screen of them
    // now, the rest between the events that show it.
    m_readTimer.setSingleShot(true);
    m_readTimer.setInterval(0);
    connect(&m_readTimer, &QTimer::timeout, this, [this] {
        readMore(ReadRunsEach);
        emit historyChanged();
    });
    m_unread = RunRecord::directories(m_runsDirectory);
    readMore(FirstReadRuns);
}

void RunManager::readMore(int count)
{
    const qsizetype n = std::min<qsizetype>(count, m_unread.size());
    for (const QString &dir : m_unread.first(n)) {
        RunInfo info;
        if (RunRecord::read(dir, &info))
            m_history.insert(RunRecord::insertPosition(m_history, info), info);
    }
    m_unread.remove(0, n);
    followRecorded();
    if (!m_unread.isEmpty())
        m_readTimer.start();
}

// Controllers are children; their destructors kill what still runs.
RunManager::~RunManager() = default;

RunController *RunManager::launch(const Profile &profile, const TrainingConfig &config,
                                  RunController::Options options, QString *error)
{
    options.runsDirectory = m_runsDirectory;
    auto *c = new RunController(profile, config, options, this);
    if (!c->start(error)) {
        delete c;
        refresh();
        return nullptr;
    }
    adopt(c);
    return c;
}

void RunManager::adopt(RunController *c)
{
    const QString id = c->runId();
    m_controllers.insert(id, c);
    connect(c, &RunController::stateChanged, this, [this, c, id](RunState state) {
        updateInfo(c);
        emit runStateChanged(id, state);
    });
    connect(c, &RunController::finished, this, [this, c, id](RunState state) {
        updateInfo(c);
        emit runFinished(id, state);
    });
    connect(c, &RunController::detached, this, [this] { refresh(); });
    // A verdict (a hang, a desync, a failure report) changes what the run list says without a
    // change of RunState; judged at most twice a second, not at every rank's step.
    auto judgeSoon = [this] {
        if (!m_judgeTimer.isActive())
            m_judgeTimer.start();
    };
    connect(c, &RunController::rankChanged, this, judgeSoon);
    connect(c, &RunController::collectiveVerdictChanged, this, judgeSoon);
    connect(c, &RunController::failureReportChanged, this, judgeSoon);
    refresh();
    emit runStarted(id);
}

RunController *RunManager::reattach(const QString &idOrName, RunController::Options options,
                                    QString *error)
{
    const QString dir = RunRecord::resolve(m_runsDirectory, idOrName, error);
    if (dir.isEmpty())
        return nullptr;
    RunRecord r;
    if (!r.open(dir, error))
        return nullptr;
    if (RunController *old = controller(r.id())) {
        if (!old->isReadOnly() && !old->isDetached()) {
            *error =
                QCoreApplication::translate("rankdeck::RunManager", "run %1 is attached already")
                    .arg(r.id());
            return nullptr;
        }
        m_controllers.remove(r.id());
        old->deleteLater();
    }
    options.runsDirectory = m_runsDirectory;
    RunController *c = RunController::reattach(dir, options, this, error);
    if (!c) {
        refresh();
        return nullptr;
    }
    adopt(c);
    return c;
}

QStringList RunManager::detachAll()
{
    QStringList released;
    for (RunController *c : activeRuns()) {
        if (c->canDetach() && c->detachAndRelease(nullptr))
            released << c->runId();
    }
    return released;
}

RunController *RunManager::open(const QString &idOrName, QString *error)
{
    if (RunController *c = controller(idOrName))
        return c;
    // A run's folder, as `rankdeck RUN` may name it (a file manager, a shell's completion).
    const QFileInfo folder(idOrName);
    const QString dir = folder.isDir() && QFileInfo::exists(idOrName + QStringLiteral("/run.json"))
                            ? folder.absoluteFilePath()
                            : RunRecord::resolve(m_runsDirectory, idOrName, error);
    if (dir.isEmpty())
        return nullptr;
    RunRecord r;
    if (!r.open(dir, error))
        return nullptr;
    if (RunController *c = controller(r.id()))
        return c;
    RunController *c = RunController::reopen(dir, this, error);
    if (c)
        m_controllers.insert(c->runId(), c);
    return c;
}

void RunManager::closeRun(const QString &runId)
{
    RunController *c = controller(runId);
    if (!c || (!c->isReadOnly() && !isTerminal(c->state())))
        return; // a live run stays until it ends
    m_controllers.remove(runId);
    c->deleteLater();
}

bool RunManager::remove(const QString &runId, QString *error, qint64 *freedBytes)
{
    const auto info = std::find_if(m_history.cbegin(), m_history.cend(),
                                   [&](const RunInfo &i) { return i.id == runId; });
    if (info == m_history.cend()) {
        *error = tr("run %1: no such run in %2").arg(runId, m_runsDirectory);
        return false;
    }
    if (RunPrune::mayStillRun(*info)) {
        *error = tr("run %1 is %2: stop it before deleting it")
                     .arg(info->name, shownStateWord(info->shown));
        return false;
    }
    const QString dir = info->directory, name = info->name;
    if (RunController *c = controller(runId)) {
        m_controllers.remove(runId);
        c->deleteLater();
    }
    if (freedBytes)
        *freedBytes = RunPrune::diskBytes(dir);
    if (!QDir(dir).removeRecursively()) {
        refresh(); // what could be deleted is gone from the list; the rest stays
        *error = tr("run %1: could not delete all of %2").arg(name, dir);
        return false;
    }
    refresh();
    return true;
}

RunController *RunManager::controller(const QString &runId) const
{
    return m_controllers.value(runId).data();
}

QList<RunController *> RunManager::activeRuns() const
{
    QList<RunController *> out;
    for (const QPointer<RunController> &c : m_controllers) {
        if (c && !c->isReadOnly() && !c->isDetached() && !isTerminal(c->state()))
            out.append(c);
    }
    return out;
}

bool RunManager::drivenHere(const QString &runId) const
{
    const RunController *c = controller(runId);
    return c && !c->isReadOnly() && !c->isDetached();
}

void RunManager::refresh()
{
    // What came or went, and what may still change, read again; a finished run's record does
    // not change, so a thousand of them are not read again whenever a run starts or goes (that
    // was ~50 ms of the GUI thread at 1,000 records).
    const QStringList directories = RunRecord::directories(m_runsDirectory);
    const QSet<QString> present(directories.cbegin(), directories.cend());
    QSet<QString> known;
    m_history.removeIf([&](const RunInfo &i) { return !present.contains(i.directory); });
    for (qsizetype k = 0; k < m_history.size();) {
        RunInfo &info = m_history[k];
        if (!isTerminal(info.state)) {
            RunInfo again;
            if (!RunRecord::read(info.directory, &again)) {
                m_history.removeAt(k); // cut or unreadable now: the list says so
                continue;
            }
            info = again;
        }
        known.insert(info.directory);
        ++k;
    }
    m_unread.removeIf([&](const QString &dir) { return !present.contains(dir); });
    known.unite(QSet<QString>(m_unread.cbegin(), m_unread.cend()));
    for (const QString &dir : directories) {
        RunInfo info;
        if (!known.contains(dir) && RunRecord::read(dir, &info))
            m_history.insert(RunRecord::insertPosition(m_history, info), info);
    }
    // A run this process drives is never "launcher gone", and its state is the live one.
    for (RunInfo &i : m_history) {
        if (drivenHere(i.id)) {
            const RunController *c = controller(i.id);
            i.state = c->state();
            i.launcherGone = false;
            i.rootCause = c->rootCauseSummary();
            i.attempt = c->attempt();
            i.shown = shownRunState(c->state(), c->verdictFacts());
        }
    }
    followRecorded();
    emit historyChanged();
}

void RunManager::followRecorded()
{
    // Runs driven here say what changes through their controller; finished runs do not change.
    QStringList dirs;
    for (const RunInfo &i : std::as_const(m_history))
        if (!isTerminal(i.state) && !drivenHere(i.id))
            dirs << i.directory;
    m_watcher->setFollowed(dirs);
}

void RunManager::updateRecorded(const QStringList &directories)
{
    bool changed = false;
    for (const QString &dir : directories) {
        RunRecord r;
        QString error;
        if (!r.open(dir, &error)) {
            refresh(); // gone or cut: the list says so
            return;
        }
        const auto it = std::find_if(m_history.begin(), m_history.end(),
                                     [&](const RunInfo &i) { return i.id == r.id(); });
        if (it == m_history.end()) {
            refresh();
            return;
        }
        if (drivenHere(it->id))
            continue;
        const RunInfo next = r.info();
        // Only what a recorded run's progress changes; a rewrite that changed none of it (the
        // state file is rewritten for every rank's step) is no news to the views.
        if (next.state != it->state || next.launcherGone != it->launcherGone ||
            next.detached != it->detached || next.rootCause != it->rootCause ||
            next.attempt != it->attempt || next.endedUs != it->endedUs || next.hung != it->hung ||
            next.rankSummary != it->rankSummary || next.worldSize != it->worldSize ||
            next.shown != it->shown) {
            *it = next;
            changed = true;
        }
    }
    if (!changed)
        return;
    followRecorded();
    emit historyChanged();
}

void RunManager::updateInfo(RunController *c)
{
    for (RunInfo &i : m_history) {
        if (i.id == c->runId()) {
            i.state = c->state();
            i.launcherGone = false;
            i.rootCause = c->rootCauseSummary();
            i.attempt = c->attempt();
            i.endedUs = c->endedUs();
            i.shown = shownRunState(c->state(), c->verdictFacts());
            emit historyChanged();
            return;
        }
    }
    refresh();
}

void RunManager::judgeDriven()
{
    bool changed = false;
    for (RunInfo &i : m_history) {
        if (!drivenHere(i.id))
            continue;
        const RunController *c = controller(i.id);
        const ShownState shown = shownRunState(c->state(), c->verdictFacts());
        changed = changed || shown != i.shown;
        i.shown = shown;
    }
    if (changed)
        emit historyChanged();
}

void RunManager::stopAll()
{
    for (RunController *c : activeRuns())
        c->stop();
}

} // namespace rankdeck
