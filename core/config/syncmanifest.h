// SPDX-License-Identifier: GPL-3.0-or-later
//
// What `launch --sync DIR` sends: the files of DIR with their relative path, size, mode and
// SHA-256, without .git/ and what .gitignore excludes. The nodes keep the manifest of their copy
// (toJson()), so the next launch compares hashes and sends only what changed (SyncDiff).
//
// Which files: inside a git work tree, what `git ls-files --cached --others --exclude-standard`
// lists (nested .gitignore files, .git/info/exclude and the global excludes all count, as the
// user's own `git status` shows them); elsewhere a GitIgnoreMatcher over the tree's .gitignore
// files. Symbolic links are followed when they point to a file inside DIR (the node gets a plain
// copy) and skipped with a note otherwise; nested repositories and submodules are skipped with
// a note. The size limit is checked on the sizes before anything is hashed, so a directory that
// is too big fails at once, naming its largest files.
#pragma once

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

namespace rankdeck {

struct SyncFile
{
    QString path; // relative to the directory, '/'-separated
    qint64 size = 0;
    int mode = 0644;   // 0755 when the owner may execute it locally, else 0644
    QByteArray sha256; // hex
};

class SyncManifest
{
public:
    static constexpr qint64 kDefaultLimitBytes = qint64(200) << 20;

    // Lists and hashes `directory` (absolute or relative to the current directory). Empty
    // manifest and *error (naming the directory, the total and the largest files past
    // limitBytes) when it cannot be read or is too big. limitBytes <= 0: no limit.
    static SyncManifest scan(const QString &directory, qint64 limitBytes, QString *error);
    // scan() once for all nodes of one launch (token: the run id): the first caller scans, the
    // others, on other threads, wait for it and get the same manifest or error.
    static SyncManifest scanShared(const QString &directory, qint64 limitBytes,
                                   const QString &token, QString *error);

    bool isValid() const { return !m_directory.isEmpty(); }
    QString directory() const { return m_directory; } // absolute, local
    const QList<SyncFile> &files() const { return m_files; }
    qint64 totalBytes() const;
    // What was left out and why ("skipped symlink data -> /mnt/x (outside the directory)").
    const QStringList &notes() const { return m_notes; }
    bool listedByGit() const { return m_byGit; }

    // What was sent for one file when it changed after the scan.
    void setSha256(const QString &path, const QByteArray &sha256);

    // The copy's name on a node: "<directory name>-<12 hex of SHA-256(launcher host:path)>", so
    // two launchers or two directories of the same name never share a copy.
    QString remoteName() const;

    // The manifest as the node keeps it, and back (path → file). parse: false and *error when
    // it is not one (a missing manifest is the caller's business).
    QByteArray toJson() const;
    static bool parseJson(const QByteArray &json, QHash<QString, SyncFile> *files, QString *error);

    // "200M", "1.5G", "512KiB", "1048576" → bytes (binary units); false for anything else.
    static bool parseSize(const QString &text, qint64 *bytes);
    // "312 bytes", "4.2 KiB", "1.3 MiB"
    static QString formatSize(qint64 bytes);

private:
    bool listWithGit(QStringList *paths, QString *error);
    void listWithMatcher(QStringList *paths);

    QString m_directory;
    QString m_canonical;
    QList<SyncFile> m_files;
    QStringList m_notes;
    bool m_byGit = false;
};

} // namespace rankdeck
