// SPDX-License-Identifier: GPL-3.0-or-later
//
// The directory rankdeck-supervisor writes the rankdeck module into, and puts first on the
// program's PYTHONPATH, when it is run without --run-dir: ${TMPDIR:-/tmp}/rankdeck-$UID (issue 29,
// problem 1). Another local user who makes it first, or a directory others may write to, or a
// link in its place, must not get their json.py imported by the victim's program: the supervisor
// refuses the directory, naming it, and the program never runs. A fresh one is made 0700.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

class TestSupervisorRunDir : public QObject
{
    Q_OBJECT

private slots:
    void plantedDirectory_data()
    {
        QTest::addColumn<QString>("plant"); // how the default directory is prepared
        QTest::addColumn<bool>("refused");
        QTest::addColumn<QString>("says");
        QTest::newRow("none: made private") << u"none"_s << false << QString();
        QTest::newRow("world-writable, json.py planted")
            << u"mode 0777"_s << true << u"mode 0777: others may write to it"_s;
        QTest::newRow("a link to a directory with json.py")
            << u"symlink"_s << true << u"a symbolic link"_s;
        QTest::newRow("owned by another user, json.py planted")
            << u"owner nobody"_s << true << u"owned by uid 65534"_s;
    }
    void plantedDirectory()
    {
        QFETCH(QString, plant);
        QFETCH(bool, refused);
        QFETCH(QString, says);
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString dir = tmp.path() + u"/rankdeck-"_s + QString::number(::getuid());
        const QString marker = tmp.path() + u"/planted-code-ran"_s;
        // What the attacker leaves: python/json.py, which the victim's `import json` would find
        // first on PYTHONPATH.
        auto plantIn = [&](const QString &d) {
            return QDir().mkpath(d + u"/python"_s) && [&] {
                QFile f(d + u"/python/json.py"_s);
                return f.open(QIODevice::WriteOnly) &&
                       f.write("open(" + ('"' + marker.toUtf8() + '"') +
                               ", 'w').write('pwned')\n") > 0;
            }();
        };
        if (plant == u"mode 0777"_s) {
            QVERIFY(plantIn(dir));
            QVERIFY(::chmod(dir.toLocal8Bit().constData(), 0777) == 0);
        } else if (plant == u"symlink"_s) {
            const QString elsewhere = tmp.path() + u"/elsewhere"_s;
            QVERIFY(plantIn(elsewhere));
            QVERIFY(::chmod(elsewhere.toLocal8Bit().constData(), 0700) == 0);
            QVERIFY(QFile::link(elsewhere, dir));
        } else if (plant == u"owner nobody"_s) {
            if (::getuid() != 0)
                QSKIP("needs root to make a directory another user owns");
            QVERIFY(plantIn(dir));
            QVERIFY(::chown(dir.toLocal8Bit().constData(), 65534, 65534) == 0);
        }
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"TMPDIR"_s, tmp.path());
        env.insert(u"RANK"_s, u"0"_s);
        env.insert(u"MASTER_PORT"_s, u"29999"_s);
        env.remove(u"PYTHONPATH"_s);
        p.setProcessEnvironment(env);
        const QString python = qEnvironmentVariable("RANKDECK_TORCH_PYTHON", u"python3"_s);
        p.start(qEnvironmentVariable("RANKDECK_BIN_DIR") + u"/rankdeck-supervisor"_s,
                {u"--"_s, python, u"-c"_s, u"import json; print('program ran')"_s});
        QVERIFY(p.waitForFinished(60000));
        const QString out = QString::fromUtf8(p.readAllStandardOutput());
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(!QFile::exists(marker), "the planted json.py ran as the user");
        if (refused) {
            QVERIFY2(p.exitCode() != 0, qPrintable(out));
            QVERIFY2(err.contains(dir) && err.contains(says), qPrintable(err));
            QVERIFY2(!out.contains(u"program ran"_s), qPrintable(out));
        } else {
            QVERIFY2(p.exitCode() == 0, qPrintable(err));
            QVERIFY2(out.contains(u"program ran"_s), qPrintable(out));
            struct stat st = {};
            QVERIFY(::lstat(dir.toLocal8Bit().constData(), &st) == 0);
            QCOMPARE(st.st_mode & 0777, mode_t(0700));
        }
    }
};

QTEST_GUILESS_MAIN(TestSupervisorRunDir)
#include "tst_supervisorrundir.moc"
