// SPDX-License-Identifier: GPL-3.0-or-later
//
// AtomicFile, the one way the launcher replaces a file: a regular target is replaced whole or
// not at all; a device node or FIFO is written in place and stays what it was; a directory is
// refused; a full disk fails loudly (the error of the last flush included) and leaves the old
// content and no temporary file behind.
#include "fiforeader.h"
#include "smalltmpfs.h"
#include "util/atomicfile.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using rankdeck::AtomicFile;

namespace {

bool isCharDevice(const QString &path)
{
    struct stat st = {};
    return ::stat(path.toLocal8Bit().constData(), &st) == 0 && S_ISCHR(st.st_mode);
}

} // namespace

class TestAtomicFile : public QObject
{
    Q_OBJECT

private slots:
    void replacesRegularFile()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("state.json"));
        QVERIFY(AtomicFile::writeFile(path, "old"));
        QString error;
        QVERIFY2(AtomicFile::writeFile(path, "new content", &error), qPrintable(error));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray("new content"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files),
                 QStringList{QStringLiteral("state.json")});
    }

    void cancelKeepsOldContent()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("a.csv"));
        QVERIFY(AtomicFile::writeFile(path, "old"));
        {
            AtomicFile f(path);
            QVERIFY(f.open(nullptr));
            QVERIFY(f.write("half", nullptr));
        } // no commit
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray("old"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{QStringLiteral("a.csv")});
    }

    void devices_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<bool>("ok");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("/dev/null") << QStringLiteral("/dev/null") << true << QString();
        // ENOSPC on every write: the error must come out, not "written".
        QTest::newRow("/dev/full")
            << QStringLiteral("/dev/full") << false << QStringLiteral("/dev/full");
    }
    void devices()
    {
        QFETCH(QString, path);
        QFETCH(bool, ok);
        QFETCH(QString, mentions);
        if (!isCharDevice(path))
            QSKIP(qPrintable(path + QStringLiteral(" is not a character device here")));
        AtomicFile f(path);
        QString error;
        QVERIFY2(f.open(&error), qPrintable(error));
        QVERIFY(f.isDirect());
        const QByteArray data(100, 'x');
        const bool written = f.write(data, &error) && f.commit(&error);
        QCOMPARE(written, ok);
        if (!ok)
            QVERIFY2(error.contains(mentions), qPrintable(error));
        // The device is still the device, never replaced by a regular file.
        QVERIFY(isCharDevice(path));
    }

    void fifoIsWrittenInPlace()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("pipe"));
        rankdeck::testing::FifoReader reader(path);
        QVERIFY(reader.isValid());
        QString error;
        const bool ok = AtomicFile::writeFile(path, "rank,metric\n0,loss\n", &error);
        const QByteArray received = reader.wait();
        QVERIFY2(ok, qPrintable(error));
        QCOMPARE(received, QByteArray("rank,metric\n0,loss\n"));
        QVERIFY(QFileInfo(path).exists() && !QFileInfo(path).isFile()); // still the FIFO
    }

    void directoryIsRefused()
    {
        QTemporaryDir dir;
        QString error;
        QVERIFY(!AtomicFile::writeFile(dir.path(), "x", &error));
        QVERIFY2(error.contains(dir.path()) && error.contains(QStringLiteral("directory")),
                 qPrintable(error));
    }

    void fullDisk_data()
    {
        QTest::addColumn<int>("bytes");
        QTest::addColumn<int>("leave");
        // Small enough to stay in QSaveFile's buffer until the last flush, whose error
        // QSaveFile::commit() alone does not see.
        QTest::newRow("small, disk full") << 200 << 0;
        QTest::newRow("big, disk full") << 300000 << 0;
        QTest::newRow("big, 8 KiB left") << 300000 << 8192;
    }
    void fullDisk()
    {
        QFETCH(int, bytes);
        QFETCH(int, leave);
        rankdeck::testing::SmallTmpfs fs(2 * 1024 * 1024);
        if (!fs.isMounted())
            QSKIP(qPrintable(fs.problem()));
        const QString path = fs.path() + QStringLiteral("/state.json");
        QVERIFY(AtomicFile::writeFile(path, "old state"));
        QVERIFY(fs.fill(leave));
        QString error;
        QVERIFY(!AtomicFile::writeFile(path, QByteArray(bytes, 's'), &error));
        QVERIFY2(error.contains(path), qPrintable(error));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray("old state"));
        // No temporary file left behind.
        QCOMPARE(QDir(fs.path()).entryList(QDir::Files),
                 (QStringList{QStringLiteral("filler"), QStringLiteral("state.json")}));
        // With room again it works.
        QVERIFY(fs.unfill());
        QVERIFY2(AtomicFile::writeFile(path, QByteArray(bytes, 's'), &error), qPrintable(error));
        QCOMPARE(QFileInfo(path).size(), qint64(bytes));
    }
};

QTEST_GUILESS_MAIN(TestAtomicFile)
#include "tst_atomicfile.moc"
