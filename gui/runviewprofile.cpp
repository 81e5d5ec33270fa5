// SPDX-License-Identifier: GPL-3.0-or-later
//
// RunView's Profile tab: the newest profile the run's record holds (profiles/<id>/, written by
// the launcher's ProfileRecorder, whichever process asked), and "Profile 10 s" on a run this
// window drives, or through the record on one another launcher owns.
#include "profilepage.h"
#include "run/runcontroller.h"
#include "runview.h"
#include "store/collapsedstacks.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTimer>

namespace rankdeck {

void RunView::refreshProfile()
{
    if (!m_run) {
        m_profile->setProfiles({}, QString());
        m_profile->setAvailable(false, tr("No run selected."));
        return;
    }
    const bool live = !isTerminal(m_run->state()) && (!m_run->isReadOnly() || m_launcherAlive);
    if (!m_run->config().isProgram())
        m_profile->setAvailable(false, tr("The built-in worker reports its step and "
                                          "communication times instead (Overview)."));
    else if (!live)
        m_profile->setAvailable(false, tr("The run is not going on: its recorded profiles are "
                                          "shown."));
    else if (!m_run->profiling())
        m_profile->setAvailable(true);
    // The newest complete profile of the record (profile.json is written last).
    const QDir profiles(m_run->record().profilesDirectory());
    QStringList dirs = profiles.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
    while (!dirs.isEmpty() &&
           !QFileInfo::exists(profiles.filePath(dirs.last() + QStringLiteral("/profile.json"))))
        dirs.removeLast();
    if (dirs.isEmpty())
        m_profile->setProfiles({}, QString());
    else
        showProfile(profiles.filePath(dirs.last()));
}

void RunView::showProfile(const QString &directory)
{
    QMap<int, QHash<QString, qint64>> perRank;
    const QDir dir(directory);
    for (const QString &file : dir.entryList({QStringLiteral("rank-*.collapsed")}, QDir::Files)) {
        bool ok = false;
        const int rank = file.mid(5, file.size() - 5 - 10).toInt(&ok);
        CollapsedStacks::Counts stacks;
        QString error;
        if (ok && CollapsedStacks::read(dir.filePath(file), &stacks, &error))
            perRank.insert(rank, stacks);
    }
    QFile metaFile(dir.filePath(QStringLiteral("profile.json")));
    QJsonObject meta;
    if (metaFile.open(QIODevice::ReadOnly))
        meta = QJsonDocument::fromJson(metaFile.read(1 << 20)).object();
    const QString origin = tr("of %1 s recorded %2, in %3")
                               .arg(meta.value(QStringLiteral("seconds")).toInt())
                               .arg(meta.value(QStringLiteral("started")).toString(),
                                    QDir::toNativeSeparators(directory));
    m_profile->setProfiles(perRank, origin);
}

void RunView::requestProfile(int seconds)
{
    if (!m_run)
        return;
    QString error;
    if (!m_run->isReadOnly()) {
        if (!m_run->profile(seconds, {}, &error)) {
            m_profile->setAvailable(false, error);
            return;
        }
    } else if (!m_run->record().requestProfile(seconds, {}, &error)) {
        m_profile->setAvailable(false, error);
        return;
    }
    m_profile->setBusy(tr("Recording every rank's stacks for %1 s…").arg(seconds));
    // A run another launcher owns: its answer lands in the record; look once it is due.
    if (m_run->isReadOnly())
        QTimer::singleShot((seconds + 5) * 1000, this, &RunView::refreshProfile);
}

} // namespace rankdeck
