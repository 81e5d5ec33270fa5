// SPDX-License-Identifier: GPL-3.0-or-later
//
// Runs that others write: a run started by rankdeck-cli, by a second GUI or by a detached
// launcher did not show in an open GUI until it was restarted (issue 31: a 48-rank CLI run stayed
// invisible). The runs directory is watched for run directories that come and go, and the
// directories of runs in progress that this process does not drive for their state.json (the
// launcher replaces it by a rename, at most every 0.5 s). Bursts are coalesced: a launch makes
// a directory, renames it and writes its state within milliseconds, and 512 ranks ending at once
// are one rewrite each 0.5 s. A slow poll of the followed runs catches what no file event says:
// a launcher that died (its run is then "launcher gone").
#pragma once

#include <QFileSystemWatcher>
#include <QObject>
#include <QSet>
#include <QStringList>
#include <QTimer>

namespace rankdeck {

class RunsDirectoryWatcher : public QObject
{
    Q_OBJECT
public:
    // Creates the runs directory when it is missing: a directory that does not exist cannot be
    // watched, and the first launch would create it anyway.
    explicit RunsDirectoryWatcher(const QString &runsDirectory, QObject *parent = nullptr);

    // The run directories to follow (runs in progress driven elsewhere); others are dropped.
    void setFollowed(const QStringList &runDirectories);
    QStringList followed() const;

    // How long events are coalesced before a signal (ms).
    static constexpr int DebounceMs = 150;
    // How often followed runs are read even without an event (ms).
    static constexpr int PollMs = 5000;

signals:
    // A run directory came or went: the list is to be read again.
    void runsChanged();
    // These followed runs' files changed (or the poll came round).
    void runsUpdated(const QStringList &runDirectories);

private:
    void onDirectoryChanged(const QString &path);
    void flush();

    QString m_runsDirectory;
    QFileSystemWatcher m_watcher;
    QTimer m_debounce;
    QTimer m_poll;
    QSet<QString> m_followed;
    bool m_listChanged = false;
    QSet<QString> m_changed;
};

} // namespace rankdeck
