// SPDX-License-Identifier: GPL-3.0-or-later
//
// Small helpers the end-to-end tests share: which processes of a run are still alive, whether a
// process ended, a record file's lines, writing a test file, whether git is there, whether a run
// record holds exactly what a rank printed on its node, rankdeck-cli in a home of its own and its
// run directories.
#pragma once

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QList>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

#include <algorithm>

namespace rankdeck::testing {

// Processes whose command line contains s (pgrep -a -f), e.g. a run id that every rank and
// wrapper of a run carries.
inline QStringList processesMatching(const QString &s)
{
    QProcess p;
    p.start(QStringLiteral("pgrep"),
            {QStringLiteral("-a"), QStringLiteral("-f"), QStringLiteral("--"), s});
    p.waitForFinished(10000);
    QStringList lines =
        QString::fromLocal8Bit(p.readAllStandardOutput()).split(u'\n', Qt::SkipEmptyParts);
    // pgrep never lists itself, but a shell running it could.
    lines.removeIf([](const QString &l) { return l.contains(QLatin1String("pgrep")); });
    return lines;
}

// Whether pid runs: alive and not a zombie waiting for a reaper (in containers PID 1 often
// never reaps, and kill(pid, 0) succeeds on a zombie).
inline bool processRuns(qint64 pid)
{
    QFile f(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return false;
    const QByteArray stat = f.readAll();
    // pid (comm) state …: comm may contain spaces, so the state is what follows the last ')'.
    const QByteArray rest = stat.mid(stat.lastIndexOf(')') + 2);
    return !rest.startsWith('Z') && !rest.startsWith('X');
}

// Whether p has ended within ms. QProcess::waitForFinished() answers false for a process that
// ended while an event loop ran (QTest::qWaitFor, a QSignalSpy::wait): a fast run is no failure.
inline bool ended(QProcess &p, int ms)
{
    return p.state() == QProcess::NotRunning || p.waitForFinished(ms);
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

// A JSON file's top object (a run's state.json, run.json); empty when it cannot be read or is no
// JSON object.
inline QJsonObject readJson(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

// Writes data to path, making its directories; the owner may read and write it, and execute it
// when asked (a rewrite takes an earlier execute bit away). false on any failure.
inline bool writeFile(const QString &path, const QByteArray &data, bool executable = false)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(data) != data.size())
        return false;
    f.close();
    const QFileDevice::Permissions p = QFileDevice::ReadOwner | QFileDevice::WriteOwner;
    return f.setPermissions(executable ? p | QFileDevice::ExeOwner : p);
}

// Whether git runs here: tests that need it skip without it.
inline bool haveGit()
{
    QProcess p;
    p.start(QStringLiteral("git"), {QStringLiteral("--version")});
    return p.waitForFinished(10000) && p.exitCode() == 0;
}

// Compares what rank `rank` printed on its node (`remoteBase` + ".out"/".err", the node's
// complete copy) with the local run record in `localRunDir`: every log line exactly once (order
// aside: stdout and stderr interleave), as many events as it wrote, and `steps` training lines.
// Returns what differs, empty when nothing does.
inline QString recordMismatch(const QString &remoteBase, const QString &localRunDir, int rank,
                              int steps)
{
    const QList<QByteArray> printed = fileLines(remoteBase + QStringLiteral(".out")) +
                                      fileLines(remoteBase + QStringLiteral(".err"));
    if (printed.isEmpty())
        return QStringLiteral("nothing printed in %1.out/.err").arg(remoteBase);
    QList<QByteArray> text;
    int events = 0;
    for (const QByteArray &line : printed) {
        if (line.contains("\x1erdk1 "))
            ++events;
        else
            text.append(line);
    }
    const QByteArray prefix = QStringLiteral("Rank %1: Epoch").arg(rank).toUtf8();
    const auto epochLines = std::count_if(
        text.cbegin(), text.cend(), [&](const QByteArray &t) { return t.startsWith(prefix); });
    if (epochLines != steps)
        return QStringLiteral("rank %1 printed %2 training lines, not %3")
            .arg(rank)
            .arg(epochLines)
            .arg(steps);
    QList<QByteArray> recorded = fileLines(localRunDir + QStringLiteral("/rank-%1.log").arg(rank));
    std::sort(text.begin(), text.end());
    std::sort(recorded.begin(), recorded.end());
    if (recorded != text)
        return QStringLiteral("rank %1: the record has %2 log lines, the node %3 (or they differ)")
            .arg(rank)
            .arg(recorded.size())
            .arg(text.size());
    const auto recordedEvents =
        fileLines(localRunDir + QStringLiteral("/rank-%1.events.jsonl").arg(rank)).size();
    if (recordedEvents != events)
        return QStringLiteral("rank %1: %2 events recorded, %3 printed")
            .arg(rank)
            .arg(recordedEvents)
            .arg(events);
    return {};
}

// A command-line program run to its end: exit code (-1: crashed or timed out) and its output.
struct CommandResult
{
    int code = -1;
    QString out;
    QString err;
};

inline CommandResult runCommand(const QString &program, const QStringList &args,
                                const QProcessEnvironment &env, int timeoutMs)
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(program, args);
    CommandResult r;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.err = QStringLiteral("timed out");
        return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

// rankdeck-cli's environment with its profiles and run records under `home` (XDG_DATA_HOME and
// XDG_CONFIG_HOME), nothing of the user's.
inline QProcessEnvironment cliEnvironment(const QString &home)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("XDG_DATA_HOME"), home + QStringLiteral("/data"));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), home + QStringLiteral("/config"));
    return env;
}

// The one run directory under cliEnvironment(home) whose id carries `name`; empty when there is
// none or more than one.
inline QString runDirectoryNamed(const QString &home, const QString &name)
{
    const QString runs = home + QStringLiteral("/data/rankdeck/runs");
    const QStringList dirs =
        QDir(runs).entryList({QStringLiteral("*-") + name + QStringLiteral("-*")}, QDir::Dirs);
    return dirs.size() == 1 ? runs + QLatin1Char('/') + dirs.first() : QString();
}

// Live processes (zombies aside) whose environment names the run, as "pid (comm)": what a run
// must not leave behind. Every rank and everything it starts inherits RANKDECK_RUN_ID.
inline QStringList processesOfRun(const QString &runId)
{
    QStringList found;
    const QByteArray needle = "RANKDECK_RUN_ID=" + runId.toUtf8();
    const QStringList pids =
        QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &pid : pids) {
        QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
        if (!stat.open(QIODevice::ReadOnly))
            continue;
        const QByteArray s = stat.readAll();
        if (s.mid(s.lastIndexOf(')') + 2, 1) == "Z")
            continue;
        QFile env(QStringLiteral("/proc/%1/environ").arg(pid));
        if (env.open(QIODevice::ReadOnly) && env.readAll().split('\0').contains(needle))
            found << pid + QLatin1Char(' ') +
                         QString::fromUtf8(
                             s.mid(s.indexOf('('), s.lastIndexOf(')') - s.indexOf('(') + 1));
    }
    return found;
}

} // namespace rankdeck::testing
