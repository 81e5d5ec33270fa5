// SPDX-License-Identifier: GPL-3.0-or-later
//
// The one way the launcher replaces a file (state.json, run.json, profiles, CSV exports):
// written to a temporary name next to it, then renamed over it, so a reader sees the old file
// or the new one, never half of one. QSaveFile does the renaming, but its commit() misses the
// error of the last flush (a full disk leaves a 0-byte file and commit() says true), so every
// write, the flush and the commit are checked here and the error names the file.
//
// A target that exists and is not a regular file (/dev/full, a FIFO, a terminal) is written
// directly instead: a rename would replace the device with a regular file. A directory is
// refused.
#pragma once

#include <QByteArrayView>
#include <QString>

#include <memory>

class QFileDevice;
class QIODevice;

namespace rankdeck {

class AtomicFile
{
public:
    explicit AtomicFile(const QString &path);
    ~AtomicFile(); // without commit(): the target stays as it was
    AtomicFile(const AtomicFile &) = delete;
    AtomicFile &operator=(const AtomicFile &) = delete;

    bool open(QString *error);
    // The device to write to between open() and commit().
    QIODevice *device() const;
    bool write(QByteArrayView data, QString *error);
    // Flushes, checks every error since open() and renames into place.
    bool commit(QString *error);
    // Drops what was written; the target stays as it was.
    void cancel();
    // Whether the target is written in place (a device node or FIFO) rather than replaced.
    bool isDirect() const { return m_direct; }

    // Why a write to file failed, for a message: Qt's own text, or, where Qt has none ("Unknown
    // error" from a failed buffer flush), what the file system says (no space left, how much).
    static QString writeErrorText(const QFileDevice &file);

    // open + write + commit.
    static bool writeFile(const QString &path, QByteArrayView data, QString *error = nullptr);

private:
    QString m_path;
    std::unique_ptr<QFileDevice> m_file;
    bool m_direct = false;
    bool m_failed = false;
};

} // namespace rankdeck
