// SPDX-License-Identifier: GPL-3.0-or-later
#include "record/runsdirectorywatcher.h"

#include <QDir>

namespace rankdeck {

RunsDirectoryWatcher::RunsDirectoryWatcher(const QString &runsDirectory, QObject *parent)
    : QObject(parent), m_runsDirectory(QDir::cleanPath(runsDirectory))
{
    QDir().mkpath(m_runsDirectory);
    m_watcher.addPath(m_runsDirectory);
    connect(&m_watcher, &QFileSystemWatcher::directoryChanged, this,
            &RunsDirectoryWatcher::onDirectoryChanged);
    m_debounce.setSingleShot(true);
    m_debounce.setInterval(DebounceMs);
    connect(&m_debounce, &QTimer::timeout, this, &RunsDirectoryWatcher::flush);
    m_poll.setInterval(PollMs);
    connect(&m_poll, &QTimer::timeout, this, [this] {
        if (!m_followed.isEmpty())
            emit runsUpdated(followed());
    });
}

void RunsDirectoryWatcher::setFollowed(const QStringList &runDirectories)
{
    QSet<QString> next;
    for (const QString &d : runDirectories)
        next.insert(QDir::cleanPath(d));
    if (next == m_followed)
        return;
    QStringList gone, added;
    for (const QString &d : std::as_const(m_followed))
        if (!next.contains(d))
            gone << d;
    for (const QString &d : std::as_const(next))
        if (!m_followed.contains(d))
            added << d;
    if (!gone.isEmpty())
        m_watcher.removePaths(gone);
    if (!added.isEmpty())
        m_watcher.addPaths(added); // a directory already gone is left out, and so not followed
    m_followed = std::move(next);
    if (m_followed.isEmpty())
        m_poll.stop();
    else if (!m_poll.isActive())
        m_poll.start();
}

QStringList RunsDirectoryWatcher::followed() const
{
    QStringList out(m_followed.cbegin(), m_followed.cend());
    out.sort();
    return out;
}

void RunsDirectoryWatcher::onDirectoryChanged(const QString &path)
{
    if (QDir::cleanPath(path) == m_runsDirectory)
        m_listChanged = true;
    else
        m_changed.insert(QDir::cleanPath(path));
    if (!m_debounce.isActive())
        m_debounce.start();
}

void RunsDirectoryWatcher::flush()
{
    // Reading the list again reads every run: the followed ones need no signal of their own.
    if (m_listChanged) {
        m_listChanged = false;
        m_changed.clear();
        emit runsChanged();
        return;
    }
    QStringList changed;
    for (const QString &d : std::as_const(m_changed))
        if (m_followed.contains(d))
            changed << d;
    m_changed.clear();
    if (!changed.isEmpty()) {
        changed.sort();
        emit runsUpdated(changed);
    }
}

} // namespace rankdeck
