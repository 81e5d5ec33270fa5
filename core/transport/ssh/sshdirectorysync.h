// SPDX-License-Identifier: GPL-3.0-or-later
//
// Brings one node's copy of a synced directory (launch --sync) up to date over the node's
// session: one exec channel reads what the node has (the manifest of the last sync, kept beside
// the copy, and a listing of the copy), SyncDiff decides, and one SFTP session sends only the
// new and changed files, removes the ones gone locally and writes the new manifest (on a node
// without SFTP: exec channels, each file checked by its hash on the node). A sync with
// nothing to change costs one round trip, whatever the number of files.
//
// The copy lives in ~/.cache/rankdeck/sync/<SyncManifest::remoteName()>/ and its manifest in
// <that>.manifest.json, outside the copy, so the program never sees it. The manifest is removed
// before the first change and written after the last, so an interrupted sync makes the next one
// compare against nothing and send everything again, never trust a half-written file.
#pragma once

#include "transport/transport.h"

#include <QString>

#include <functional>

namespace rankdeck {

class SshSession;
class SyncManifest;
struct SyncDiff;

class SshDirectorySync
{
public:
    using Progress = std::function<void(const QString &stage, int percent)>;

    // session must be connected; home is the node's $HOME (absolute).
    SshDirectorySync(SshSession *session, const QString &host, const QString &home,
                     Progress progress);

    // false and *error (naming the node and the file) when the copy could not be made.
    bool run(const SyncManifest &manifest, SyncStats *stats, QString *error);

    // Where the copies of synced directories live, below the node's home directory.
    static QString baseDirectory() { return QStringLiteral(".cache/rankdeck/sync"); }

private:
    // The same changes without SFTP (sshd without a Subsystem line): one exec channel for the
    // directories, removals and modes, then each file and the manifest over SshExecUpload.
    bool runOverExec(const SyncManifest &manifest, const SyncDiff &diff, const QString &root,
                     const QString &manifestPath, SyncStats *stats, QString *error);

    SshSession *m_session;
    QString m_host;
    QString m_home;
    Progress m_progress;
};

} // namespace rankdeck
