// SPDX-License-Identifier: GPL-3.0-or-later
#include "util/atomicfile.h"

#include "util/translation.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QStorageInfo>

namespace rankdeck {

AtomicFile::AtomicFile(const QString &path) : m_path(path) {}

AtomicFile::~AtomicFile()
{
    cancel();
}

bool AtomicFile::open(QString *error)
{
    auto fail = [&](const QString &why) {
        if (error)
            *error = tr("cannot write %1: %2").arg(m_path, why);
        m_file.reset();
        return false;
    };
    const QFileInfo info(m_path);
    if (info.isDir())
        return fail(tr("it is a directory"));
    // exists() follows symlinks: a link to /dev/null is a device too.
    m_direct = info.exists() && !info.isFile();
    if (m_direct) {
        auto *f = new QFile(m_path);
        m_file.reset(f);
        // No Truncate: character devices and FIFOs have nothing to truncate.
        if (!f->open(QIODevice::WriteOnly | QIODevice::Unbuffered))
            return fail(f->errorString());
    } else {
        auto *f = new QSaveFile(m_path);
        m_file.reset(f);
        if (!f->open(QIODevice::WriteOnly))
            return fail(f->errorString());
    }
    m_failed = false;
    return true;
}

QIODevice *AtomicFile::device() const
{
    return m_file.get();
}

bool AtomicFile::write(QByteArrayView data, QString *error)
{
    if (!m_file) {
        if (error)
            *error = tr("cannot write %1: it is not open").arg(m_path);
        return false;
    }
    if (m_file->write(data.data(), data.size()) != data.size()) {
        m_failed = true;
        if (error)
            *error = tr("cannot write %1: %2").arg(m_path, writeErrorText(*m_file));
        return false;
    }
    return true;
}

bool AtomicFile::commit(QString *error)
{
    if (!m_file) {
        if (error)
            *error = tr("cannot write %1: it is not open").arg(m_path);
        return false;
    }
    auto fail = [&](const QString &why) {
        if (error)
            *error = tr("cannot write %1: %2").arg(m_path, why);
        cancel();
        return false;
    };
    // Writes through the device's own API (device()) are checked here: any error since open()
    // is in error().
    const bool flushed = m_file->flush();
    if (m_failed || !flushed || m_file->error() != QFileDevice::NoError)
        return fail(writeErrorText(*m_file));
    if (m_direct) {
        m_file->close();
        const bool ok = m_file->error() == QFileDevice::NoError;
        const QString why = m_file->errorString();
        m_file.reset();
        return ok || fail(why);
    }
    auto *save = static_cast<QSaveFile *>(m_file.get());
    if (!save->commit())
        return fail(save->errorString());
    m_file.reset();
    return true;
}

void AtomicFile::cancel()
{
    if (!m_file)
        return;
    if (!m_direct)
        static_cast<QSaveFile *>(m_file.get())->cancelWriting();
    m_file.reset(); // QSaveFile's destructor removes the temporary file
}

QString AtomicFile::writeErrorText(const QFileDevice &file)
{
    QString qt = file.errorString();
    const QStorageInfo fs(QFileInfo(file.fileName()).absolutePath());
    if (fs.isValid() && fs.bytesAvailable() < 4096)
        return tr("No space left on device (%1 bytes free on %2)")
            .arg(fs.bytesAvailable())
            .arg(fs.rootPath());
    if (qt.isEmpty() || qt == QLatin1String("Unknown error"))
        return tr("write error (%1 bytes free on %2)").arg(fs.bytesAvailable()).arg(fs.rootPath());
    return qt;
}

bool AtomicFile::writeFile(const QString &path, QByteArrayView data, QString *error)
{
    AtomicFile f(path);
    return f.open(error) && f.write(data, error) && f.commit(error);
}

} // namespace rankdeck
