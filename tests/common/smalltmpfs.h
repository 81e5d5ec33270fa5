// SPDX-License-Identifier: GPL-3.0-or-later
//
// A small tmpfs of the test's own, for full-disk tests: mounted in a temporary directory,
// unmounted (lazily, so a process still inside cannot keep it) when the object goes. Needs root
// (or CAP_SYS_ADMIN); problem() says why not, for a QSKIP.
#pragma once

#include <QByteArray>
#include <QFile>
#include <QString>
#include <QTemporaryDir>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/mount.h>

namespace rankdeck::testing {

class SmallTmpfs
{
public:
    explicit SmallTmpfs(qint64 bytes)
    {
        if (!m_dir.isValid()) {
            m_problem = QStringLiteral("no temporary directory");
            return;
        }
        const QByteArray options = "size=" + QByteArray::number(bytes) + ",mode=0700";
        if (::mount("tmpfs", m_dir.path().toLocal8Bit().constData(), "tmpfs", 0,
                    options.constData()) != 0) {
            m_problem = QStringLiteral("cannot mount a tmpfs on %1 (%2); the full-disk tests "
                                       "need root")
                            .arg(m_dir.path(), QString::fromLocal8Bit(std::strerror(errno)));
            return;
        }
        m_mounted = true;
    }
    ~SmallTmpfs()
    {
        if (m_mounted)
            ::umount2(m_dir.path().toLocal8Bit().constData(), MNT_DETACH);
    }
    SmallTmpfs(const SmallTmpfs &) = delete;
    SmallTmpfs &operator=(const SmallTmpfs &) = delete;

    bool isMounted() const { return m_mounted; }
    QString problem() const { return m_problem; }
    QString path() const { return m_dir.path(); }

    // Fills the file system until a write fails, then frees `leave` bytes (a partial write
    // reaches that far), so what is written next fails after at most `leave` bytes.
    bool fill(qint64 leave = 0)
    {
        QFile f(m_dir.path() + QStringLiteral("/filler"));
        if (!f.open(QIODevice::WriteOnly | QIODevice::Unbuffered))
            return false;
        const QByteArray block(4096, 'x');
        while (f.write(block) == block.size()) {
        }
        f.close();
        if (leave > 0)
            return f.resize(std::max<qint64>(0, f.size() - leave));
        return true;
    }
    bool unfill() { return QFile::remove(m_dir.path() + QStringLiteral("/filler")); }

private:
    QTemporaryDir m_dir;
    bool m_mounted = false;
    QString m_problem;
};

} // namespace rankdeck::testing
