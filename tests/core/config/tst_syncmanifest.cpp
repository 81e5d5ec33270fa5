// SPDX-License-Identifier: GPL-3.0-or-later
//
// What `launch --sync` sends: the .gitignore matcher against git's own rules (and against git
// itself where it is installed), the scanner on real directories (a git work tree and a plain
// one, links, the size limit) and the diff that decides what a node gets.
#include "config/gitignorematcher.h"
#include "config/syncdiff.h"
#include "config/syncmanifest.h"

#include "testprocesses.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;

using rankdeck::testing::haveGit;
using rankdeck::testing::writeFile;

namespace {

QStringList paths(const SyncManifest &m)
{
    QStringList out;
    for (const SyncFile &f : m.files())
        out << f.path;
    out.sort();
    return out;
}

bool git(const QString &dir, const QStringList &args)
{
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(u"git"_s, QStringList{u"-C"_s, dir} + args);
    return p.waitForFinished(30000) && p.exitCode() == 0;
}

// A project as users have them: sources, data, build output, caches, nested rules.
void makeProject(const QString &root)
{
    QVERIFY(writeFile(root + u"/train.py"_s, "print('hi')\n"));
    QVERIFY(writeFile(root + u"/run.sh"_s, "#!/bin/sh\n", true));
    QVERIFY(writeFile(root + u"/data/values.txt"_s, "42\n"));
    QVERIFY(writeFile(root + u"/data/big.bin"_s, QByteArray(4096, 'x')));
    QVERIFY(writeFile(root + u"/build/out.o"_s, "obj"));
    QVERIFY(writeFile(root + u"/pkg/__pycache__/m.cpython-311.pyc"_s, "pyc"));
    QVERIFY(writeFile(root + u"/pkg/m.py"_s, "x = 1\n"));
    QVERIFY(writeFile(root + u"/pkg/notes.log"_s, "log"));
    QVERIFY(writeFile(root + u"/pkg/keep.log"_s, "kept"));
    QVERIFY(writeFile(root + u"/.gitignore"_s, "build/\n__pycache__/\n*.bin\n"));
    QVERIFY(writeFile(root + u"/pkg/.gitignore"_s, "*.log\n!keep.log\n"));
}

const QStringList kProjectFiles{u".gitignore"_s,   u"data/values.txt"_s, u"pkg/.gitignore"_s,
                                u"pkg/keep.log"_s, u"pkg/m.py"_s,        u"run.sh"_s,
                                u"train.py"_s};

} // namespace

class TestSyncManifest : public QObject
{
    Q_OBJECT

private slots:
    void matcher_data();
    void matcher();
    void matcherAgreesWithGit_data() { matcher_data(); }
    void matcherAgreesWithGit();
    void scanPlainDirectory();
    void scanGitWorkTree();
    void links();
    void sizeLimitNamesTotalAndLargest();
    void badDirectory_data();
    void badDirectory();
    void parseSize_data();
    void parseSize();
    void manifestRoundTrip();
    void diff_data();
    void diff();
    void listing();
};

void TestSyncManifest::matcher_data()
{
    QTest::addColumn<QString>("rules"); // the root's .gitignore
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("isDirectory");
    QTest::addColumn<bool>("ignored");
    QTest::newRow("basename anywhere") << u"*.pyc"_s << u"a/b/c.pyc"_s << false << true;
    QTest::newRow("basename no match") << u"*.pyc"_s << u"a/b/c.py"_s << false << false;
    QTest::newRow("plain name at depth") << u"secret"_s << u"x/secret"_s << false << true;
    QTest::newRow("anchored at root") << u"/todo.txt"_s << u"todo.txt"_s << false << true;
    QTest::newRow("anchored not deeper") << u"/todo.txt"_s << u"sub/todo.txt"_s << false << false;
    QTest::newRow("inner slash anchors") << u"doc/*.md"_s << u"doc/a.md"_s << false << true;
    QTest::newRow("inner slash not deeper") << u"doc/*.md"_s << u"x/doc/a.md"_s << false << false;
    QTest::newRow("star stops at slash") << u"doc/*.md"_s << u"doc/sub/a.md"_s << false << false;
    QTest::newRow("dir only: dir") << u"out/"_s << u"a/out"_s << true << true;
    QTest::newRow("dir only: file") << u"out/"_s << u"a/out"_s << false << false;
    QTest::newRow("negation") << u"*.log\n!keep.log"_s << u"keep.log"_s << false << false;
    QTest::newRow("negation other") << u"*.log\n!keep.log"_s << u"drop.log"_s << false << true;
    QTest::newRow("last rule wins") << u"!a.txt\n*.txt"_s << u"a.txt"_s << false << true;
    QTest::newRow("leading **") << u"**/cache"_s << u"x/y/cache"_s << true << true;
    QTest::newRow("leading ** at root") << u"**/cache"_s << u"cache"_s << true << true;
    QTest::newRow("trailing **") << u"logs/**"_s << u"logs/a/b.txt"_s << false << true;
    QTest::newRow("inner **") << u"a/**/b"_s << u"a/x/y/b"_s << false << true;
    QTest::newRow("inner ** zero dirs") << u"a/**/b"_s << u"a/b"_s << false << true;
    QTest::newRow("question mark") << u"file?.txt"_s << u"file1.txt"_s << false << true;
    QTest::newRow("question mark no slash") << u"a?b"_s << u"a/b"_s << false << false;
    QTest::newRow("class") << u"*.[oa]"_s << u"lib.a"_s << false << true;
    QTest::newRow("class negated") << u"*.[!oa]"_s << u"lib.a"_s << false << false;
    QTest::newRow("range") << u"v[0-9].txt"_s << u"v7.txt"_s << false << true;
    QTest::newRow("comment") << u"#*.txt"_s << u"a.txt"_s << false << false;
    QTest::newRow("escaped hash") << u"\\#notes"_s << u"#notes"_s << false << true;
    QTest::newRow("escaped bang") << u"\\!important"_s << u"!important"_s << false << true;
    QTest::newRow("trailing spaces trimmed") << u"a.txt   "_s << u"a.txt"_s << false << true;
    QTest::newRow("blank lines") << u"\n\n*.tmp\n\n"_s << u"x.tmp"_s << false << true;
    QTest::newRow("crlf") << u"*.tmp\r\n"_s << u"x.tmp"_s << false << true;
    QTest::newRow("dot is literal") << u"a.txt"_s << u"abtxt"_s << false << false;
}

void TestSyncManifest::matcher()
{
    QFETCH(QString, rules);
    QFETCH(QString, path);
    QFETCH(bool, isDirectory);
    QFETCH(bool, ignored);
    GitIgnoreMatcher m;
    m.addRules(QString(), rules);
    QVERIFY2(m.isIgnored(path, isDirectory) == ignored,
             qPrintable(
                 u"%1 against %2 gives %3"_s.arg(path, rules).arg(m.isIgnored(path, isDirectory))));
}

// The same rules through git itself: `git check-ignore` must agree with the matcher.
void TestSyncManifest::matcherAgreesWithGit()
{
    if (!haveGit())
        QSKIP("git is not installed");
    QFETCH(QString, rules);
    QFETCH(QString, path);
    QFETCH(bool, isDirectory);
    QFETCH(bool, ignored);
    QTemporaryDir tmp;
    QVERIFY(git(tmp.path(), {u"init"_s, u"-q"_s}));
    QVERIFY(writeFile(tmp.filePath(u".gitignore"_s), rules.toUtf8()));
    if (isDirectory)
        QVERIFY(QDir().mkpath(tmp.filePath(path)));
    else
        QVERIFY(writeFile(tmp.filePath(path), "x"));
    QProcess p;
    p.start(u"git"_s, {u"-C"_s, tmp.path(), u"check-ignore"_s, u"-q"_s, u"--no-index"_s, path});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode() == 0, ignored);
}

void TestSyncManifest::scanPlainDirectory()
{
    QTemporaryDir tmp;
    makeProject(tmp.path());
    QVERIFY(writeFile(tmp.filePath(u".git/config"_s), "not a real repository"));
    QString error;
    const SyncManifest m = SyncManifest::scan(tmp.path(), 0, &error);
    QVERIFY2(m.isValid(), qPrintable(error));
    QVERIFY(!m.listedByGit());
    QCOMPARE(paths(m), kProjectFiles);
    for (const SyncFile &f : m.files()) {
        QCOMPARE(f.mode, f.path == u"run.sh"_s ? 0755 : 0644);
        QCOMPARE(f.sha256.size(), 64);
        QCOMPARE(f.size, QFileInfo(tmp.filePath(f.path)).size());
    }
    QVERIFY(m.remoteName().startsWith(QFileInfo(tmp.path()).fileName() + u'-'));
}

void TestSyncManifest::scanGitWorkTree()
{
    if (!haveGit())
        QSKIP("git is not installed");
    QTemporaryDir tmp;
    makeProject(tmp.path());
    QVERIFY(git(tmp.path(), {u"init"_s, u"-q"_s}));
    // Tracked and untracked files both travel; .git/info/exclude counts as in `git status`.
    QVERIFY(git(tmp.path(), {u"add"_s, u"train.py"_s}));
    QVERIFY(writeFile(tmp.filePath(u".git/info/exclude"_s), "run.sh\n"));
    QString error;
    const SyncManifest m = SyncManifest::scan(tmp.path(), 0, &error);
    QVERIFY2(m.isValid(), qPrintable(error));
    QVERIFY(m.listedByGit());
    QStringList expected = kProjectFiles;
    expected.removeAll(u"run.sh"_s);
    QCOMPARE(paths(m), expected);

    // A subdirectory of a work tree: paths relative to it.
    const SyncManifest sub = SyncManifest::scan(tmp.filePath(u"pkg"_s), 0, &error);
    QVERIFY2(sub.isValid(), qPrintable(error));
    QCOMPARE(paths(sub), (QStringList{u".gitignore"_s, u"keep.log"_s, u"m.py"_s}));
}

void TestSyncManifest::links()
{
    QTemporaryDir tmp, outside;
    QVERIFY(writeFile(tmp.filePath(u"real.txt"_s), "content"));
    QVERIFY(writeFile(outside.filePath(u"secret.txt"_s), "elsewhere"));
    QVERIFY(QFile::link(tmp.filePath(u"real.txt"_s), tmp.filePath(u"inside.txt"_s)));
    QVERIFY(QFile::link(outside.filePath(u"secret.txt"_s), tmp.filePath(u"outside.txt"_s)));
    QVERIFY(QFile::link(tmp.filePath(u"gone"_s), tmp.filePath(u"dangling"_s)));
    QString error;
    const SyncManifest m = SyncManifest::scan(tmp.path(), 0, &error);
    QVERIFY2(m.isValid(), qPrintable(error));
    QCOMPARE(paths(m), (QStringList{u"inside.txt"_s, u"real.txt"_s}));
    QCOMPARE(m.files().at(0).sha256, m.files().at(1).sha256);
    const QString notes = m.notes().join(u'\n');
    QVERIFY2(notes.contains(u"outside.txt"_s) && notes.contains(u"outside the directory"_s),
             qPrintable(notes));
    QVERIFY2(notes.contains(u"dangling"_s), qPrintable(notes));
}

void TestSyncManifest::sizeLimitNamesTotalAndLargest()
{
    QTemporaryDir tmp;
    QVERIFY(writeFile(tmp.filePath(u"weights.pt"_s), QByteArray(3 << 20, 'w')));
    QVERIFY(writeFile(tmp.filePath(u"train.py"_s), "print(1)\n"));
    QString error;
    const SyncManifest m = SyncManifest::scan(tmp.path(), 1 << 20, &error);
    QVERIFY(!m.isValid());
    QVERIFY2(error.contains(u"3.0 MiB in 2 files"_s), qPrintable(error));
    QVERIFY2(error.contains(u"limit of 1.0 MiB"_s), qPrintable(error));
    QVERIFY2(error.contains(u"weights.pt (3.0 MiB)"_s), qPrintable(error));
    QVERIFY2(error.contains(u"--sync-limit"_s), qPrintable(error));
    QVERIFY(SyncManifest::scan(tmp.path(), 4 << 20, &error).isValid());
}

void TestSyncManifest::badDirectory_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("message");
    QTest::newRow("missing") << u"/nonexistent/proj"_s << u"/nonexistent/proj does not exist"_s;
    QTest::newRow("a file") << u"/etc/hostname"_s << u"/etc/hostname is not a directory"_s;
}

void TestSyncManifest::badDirectory()
{
    QFETCH(QString, path);
    QFETCH(QString, message);
    QString error;
    QVERIFY(!SyncManifest::scan(path, 0, &error).isValid());
    QVERIFY2(error.contains(message), qPrintable(error));
}

void TestSyncManifest::parseSize_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<qint64>("bytes");
    QTest::newRow("bytes") << u"1048576"_s << true << qint64(1048576);
    QTest::newRow("K") << u"512K"_s << true << qint64(512) * 1024;
    QTest::newRow("M") << u"200M"_s << true << (qint64(200) << 20);
    QTest::newRow("MiB") << u"200MiB"_s << true << (qint64(200) << 20);
    QTest::newRow("MB") << u"200MB"_s << true << (qint64(200) << 20);
    QTest::newRow("G fraction") << u"1.5G"_s << true << (qint64(3) << 29);
    QTest::newRow("lower case") << u"2g"_s << true << (qint64(2) << 30);
    QTest::newRow("zero") << u"0"_s << true << qint64(0);
    QTest::newRow("words") << u"lots"_s << false << qint64(0);
    QTest::newRow("negative") << u"-5M"_s << false << qint64(0);
    QTest::newRow("unknown unit") << u"5X"_s << false << qint64(0);
    QTest::newRow("empty") << QString() << false << qint64(0);
}

void TestSyncManifest::parseSize()
{
    QFETCH(QString, text);
    QFETCH(bool, ok);
    QFETCH(qint64, bytes);
    qint64 got = -1;
    QCOMPARE(SyncManifest::parseSize(text, &got), ok);
    if (ok)
        QCOMPARE(got, bytes);
}

void TestSyncManifest::manifestRoundTrip()
{
    QTemporaryDir tmp;
    makeProject(tmp.path());
    QString error;
    const SyncManifest m = SyncManifest::scan(tmp.path(), 0, &error);
    QVERIFY2(m.isValid(), qPrintable(error));
    QHash<QString, SyncFile> parsed;
    QVERIFY2(SyncManifest::parseJson(m.toJson(), &parsed, &error), qPrintable(error));
    QCOMPARE(parsed.size(), m.files().size());
    for (const SyncFile &f : m.files()) {
        QCOMPARE(parsed.value(f.path).sha256, f.sha256);
        QCOMPARE(parsed.value(f.path).size, f.size);
        QCOMPARE(parsed.value(f.path).mode, f.mode);
    }
    QVERIFY(!SyncManifest::parseJson("{\"version\": 7}", &parsed, &error));
    QVERIFY(!SyncManifest::parseJson("not json", &parsed, &error));
}

void TestSyncManifest::diff_data()
{
    // Each file: "path:hash:size:mode"; the node's listing "path:f|d:size:mode".
    QTest::addColumn<QStringList>("local");
    QTest::addColumn<QStringList>("previous");
    QTest::addColumn<QStringList>("onNode");
    QTest::addColumn<QStringList>("upload");
    QTest::addColumn<QStringList>("remove");
    QTest::addColumn<QStringList>("chmod");
    QTest::addColumn<QStringList>("mkdir");
    QTest::addColumn<int>("unchanged");
    QTest::newRow("first sync") << QStringList{u"a.py:h1:3:420"_s, u"d/e/b.txt:h2:4:420"_s}
                                << QStringList{} << QStringList{}
                                << QStringList{u"a.py"_s, u"d/e/b.txt"_s} << QStringList{}
                                << QStringList{} << QStringList{u"d"_s, u"d/e"_s} << 0;
    QTest::newRow("nothing changed")
        << QStringList{u"a.py:h1:3:420"_s} << QStringList{u"a.py:h1:3:420"_s}
        << QStringList{u"a.py:f:3:420"_s} << QStringList{} << QStringList{} << QStringList{}
        << QStringList{} << 1;
    QTest::newRow("one changed") << QStringList{u"a.py:h1:3:420"_s, u"b.py:h9:5:420"_s}
                                 << QStringList{u"a.py:h1:3:420"_s, u"b.py:h2:5:420"_s}
                                 << QStringList{u"a.py:f:3:420"_s, u"b.py:f:5:420"_s}
                                 << QStringList{u"b.py"_s} << QStringList{} << QStringList{}
                                 << QStringList{} << 1;
    QTest::newRow("edited on the node")
        << QStringList{u"a.py:h1:3:420"_s} << QStringList{u"a.py:h1:3:420"_s}
        << QStringList{u"a.py:f:99:420"_s} << QStringList{u"a.py"_s} << QStringList{}
        << QStringList{} << QStringList{} << 0;
    QTest::newRow("removed on the node")
        << QStringList{u"a.py:h1:3:420"_s} << QStringList{u"a.py:h1:3:420"_s} << QStringList{}
        << QStringList{u"a.py"_s} << QStringList{} << QStringList{} << QStringList{} << 0;
    QTest::newRow("no manifest, same size")
        << QStringList{u"a.py:h1:3:420"_s} << QStringList{} << QStringList{u"a.py:f:3:420"_s}
        << QStringList{u"a.py"_s} << QStringList{} << QStringList{} << QStringList{} << 0;
    QTest::newRow("gone locally, program output kept")
        << QStringList{u"a.py:h1:3:420"_s} << QStringList{u"a.py:h1:3:420"_s, u"old.py:h3:2:420"_s}
        << QStringList{u"a.py:f:3:420"_s, u"old.py:f:2:420"_s, u"ckpt.pt:f:100:384"_s}
        << QStringList{} << QStringList{u"old.py"_s} << QStringList{} << QStringList{} << 1;
    QTest::newRow("executable bit only")
        << QStringList{u"run.sh:h1:3:493"_s} << QStringList{u"run.sh:h1:3:420"_s}
        << QStringList{u"run.sh:f:3:420"_s} << QStringList{} << QStringList{}
        << QStringList{u"run.sh"_s} << QStringList{} << 1;
    QTest::newRow("directory exists")
        << QStringList{u"d/new.py:h1:3:420"_s} << QStringList{} << QStringList{u"d:d:4096:448"_s}
        << QStringList{u"d/new.py"_s} << QStringList{} << QStringList{} << QStringList{} << 0;
}

void TestSyncManifest::diff()
{
    QFETCH(QStringList, local);
    QFETCH(QStringList, previous);
    QFETCH(QStringList, onNode);
    QFETCH(QStringList, upload);
    QFETCH(QStringList, remove);
    QFETCH(QStringList, chmod);
    QFETCH(QStringList, mkdir);
    QFETCH(int, unchanged);
    auto file = [](const QString &spec) {
        const QStringList p = spec.split(u':');
        return SyncFile{p[0], p[2].toLongLong(), p[3].toInt(), p[1].toLatin1()};
    };
    QList<SyncFile> l;
    for (const QString &s : local)
        l << file(s);
    QHash<QString, SyncFile> prev;
    for (const QString &s : previous)
        prev.insert(file(s).path, file(s));
    QHash<QString, SyncNodeEntry> node;
    for (const QString &s : onNode) {
        const QStringList p = s.split(u':');
        node.insert(p[0], SyncNodeEntry{p[1] == u"d"_s, p[2].toLongLong(), p[3].toInt()});
    }
    const SyncDiff d = SyncDiff::compute(l, prev, node);
    QStringList up, ch;
    for (const SyncFile &f : d.upload)
        up << f.path;
    for (const SyncFile &f : d.chmod)
        ch << f.path;
    QCOMPARE(up, upload);
    QCOMPARE(d.remove, remove);
    QCOMPARE(ch, chmod);
    QCOMPARE(d.createDirectories, mkdir);
    QCOMPARE(d.unchanged, unchanged);
}

void TestSyncManifest::listing()
{
    // What the node's `find . -printf '%y %s %m %P\0'` answers, names with spaces and newlines.
    static const char data[] = "d 4096 700 \0f 12 644 train.py\0f 3 755 my run.sh\0d 4096 700 "
                               "data\0f 5 644 data/a\nb.txt\0l 7 777 link\0garbage\0";
    const QByteArray raw(data, sizeof data - 1);
    const QHash<QString, SyncNodeEntry> e = SyncDiff::parseListing(raw);
    QCOMPARE(e.size(), 4);
    QCOMPARE(e.value(u"train.py"_s).size, 12);
    QCOMPARE(e.value(u"my run.sh"_s).mode, 0755);
    QVERIFY(e.value(u"data"_s).isDirectory);
    QCOMPARE(e.value(u"data/a\nb.txt"_s).size, 5);
    QVERIFY(!e.contains(u"link"_s));
}

QTEST_GUILESS_MAIN(TestSyncManifest)
#include "tst_syncmanifest.moc"
