// SPDX-License-Identifier: GPL-3.0-or-later
//
// What a node's copy of a synced directory needs, from three lists: the local files
// (SyncManifest), the manifest the node kept from the last sync, and what is on the node's disk
// now. Plain data so that the rules have unit tests of their own:
// - a file is unchanged only when the last manifest has its hash and the node still has it with
//   that size (a file edited or removed on the node is sent again);
// - only files the last sync put there and that are gone locally are removed: what the program
//   wrote into its working directory (checkpoints, logs) is never touched;
// - a changed executable bit alone is a chmod, not an upload.
#pragma once

#include "config/syncmanifest.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

namespace rankdeck {

// One entry of the node's listing: `find . -printf '%y %s %m %P\0'`.
struct SyncNodeEntry
{
    bool isDirectory = false;
    qint64 size = 0;
    int mode = 0; // permission bits
};

struct SyncDiff
{
    QList<SyncFile> upload;        // new or changed, in the local order
    QList<SyncFile> chmod;         // same content, other executable bit
    QStringList remove;            // synced before, gone locally
    QStringList createDirectories; // parents of uploads the node lacks, parents first
    int unchanged = 0;

    qint64 uploadBytes() const;
    bool isEmpty() const { return upload.isEmpty() && chmod.isEmpty() && remove.isEmpty(); }

    static SyncDiff compute(const QList<SyncFile> &local, const QHash<QString, SyncFile> &previous,
                            const QHash<QString, SyncNodeEntry> &onNode);
    // The node's NUL-separated listing; entries it cannot read are left out.
    static QHash<QString, SyncNodeEntry> parseListing(const QByteArray &listing);
};

} // namespace rankdeck
