// SPDX-License-Identifier: GPL-3.0-or-later
#include "config/syncdiff.h"

#include <QFile>
#include <QSet>

#include <algorithm>

namespace rankdeck {

qint64 SyncDiff::uploadBytes() const
{
    qint64 total = 0;
    for (const SyncFile &f : upload)
        total += f.size;
    return total;
}

SyncDiff SyncDiff::compute(const QList<SyncFile> &local, const QHash<QString, SyncFile> &previous,
                           const QHash<QString, SyncNodeEntry> &onNode)
{
    SyncDiff d;
    QSet<QString> localPaths;
    QSet<QString> dirs;
    for (const SyncFile &f : local) {
        localPaths.insert(f.path);
        const auto was = previous.constFind(f.path);
        const auto there = onNode.constFind(f.path);
        const bool present = there != onNode.constEnd() && !there->isDirectory;
        if (present && was != previous.constEnd() && was->sha256 == f.sha256 &&
            there->size == f.size) {
            ++d.unchanged;
            if ((there->mode & 0100) != (f.mode & 0100))
                d.chmod.append(f);
            continue;
        }
        d.upload.append(f);
        for (qsizetype slash = f.path.indexOf(QLatin1Char('/')); slash > 0;
             slash = f.path.indexOf(QLatin1Char('/'), slash + 1)) {
            const QString parent = f.path.left(slash);
            const auto p = onNode.constFind(parent);
            if ((p == onNode.constEnd() || !p->isDirectory) && !dirs.contains(parent)) {
                dirs.insert(parent);
                d.createDirectories.append(parent);
            }
        }
    }
    for (auto it = previous.cbegin(); it != previous.cend(); ++it) {
        const auto there = onNode.constFind(it.key());
        if (!localPaths.contains(it.key()) && there != onNode.constEnd() && !there->isDirectory)
            d.remove.append(it.key());
    }
    std::sort(d.remove.begin(), d.remove.end());
    // Parents before children: "a" sorts before "a/b".
    std::sort(d.createDirectories.begin(), d.createDirectories.end());
    return d;
}

QHash<QString, SyncNodeEntry> SyncDiff::parseListing(const QByteArray &listing)
{
    QHash<QString, SyncNodeEntry> entries;
    for (const QByteArray &raw : listing.split('\0')) {
        // "<type> <size> <mode> <path>"; the path may hold spaces, so split three times only.
        const int a = raw.indexOf(' ');
        const int b = a < 0 ? -1 : raw.indexOf(' ', a + 1);
        const int c = b < 0 ? -1 : raw.indexOf(' ', b + 1);
        if (c < 0 || c + 1 >= raw.size())
            continue; // the directory itself ("%P" is empty) or a torn entry
        bool okSize = false, okMode = false;
        SyncNodeEntry e;
        const QByteArray type = raw.left(a);
        e.isDirectory = type == "d";
        e.size = raw.mid(a + 1, b - a - 1).toLongLong(&okSize);
        e.mode = raw.mid(b + 1, c - b - 1).toInt(&okMode, 8);
        if (!okSize || !okMode || (type != "d" && type != "f"))
            continue;
        entries.insert(QFile::decodeName(raw.mid(c + 1)), e);
    }
    return entries;
}

} // namespace rankdeck
