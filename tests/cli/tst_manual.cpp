// SPDX-License-Identifier: GPL-3.0-or-later
//
// rankdeck-cli(1) and the bash completion (issue 30). The manual renders with `man -l`, carries
// every flag that each command's --help lists (it is generated from that help, so a flag added to
// the CLI shows up without anyone editing the page) and no builder's home directory. The
// completion script registers with `complete`, and completes commands, flags, profile names and
// run names as bash itself drives it (COMP_WORDS/COMP_CWORD), on profiles and runs made here.
#include "config/profilestore.h"
#include "config/trainingconfig.h"
#include "record/runrecord.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace rankdeck;

class TestManual : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void manPageRenders();
    void manPageHasEveryFlag_data();
    void manPageHasEveryFlag();
    void completionRegisters();
    void completes_data();
    void completes();

private:
    struct Result
    {
        int code = -1;
        QString out;
        QString err;
    };
    static Result run(const QString &program, const QStringList &args);

    QTemporaryDir m_tmp;
    QString m_bin;
    QString m_manPage;
    QString m_rendered;
    QString m_completion;
    QByteArray m_builderHome; // HOME before the test replaced it: the page was built with it
};

TestManual::Result TestManual::run(const QString &program, const QStringList &args)
{
    QProcess p;
    p.start(program, args);
    Result r;
    if (!p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished();
    }
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    return r;
}

void TestManual::initTestCase()
{
    m_bin = qEnvironmentVariable("RANKDECK_BIN_DIR");
    QVERIFY(QFileInfo(m_bin + u"/rankdeck-cli"_s).isExecutable());
    m_manPage = QStringLiteral(RANKDECK_MANPAGE);
    QVERIFY2(QFileInfo::exists(m_manPage), qPrintable(m_manPage));
    m_completion =
        qEnvironmentVariable("RANKDECK_SOURCE_DIR") + u"/resources/completion/rankdeck-cli"_s;
    QVERIFY(QFileInfo::exists(m_completion));
    QVERIFY(m_tmp.isValid());
    m_builderHome = qgetenv("HOME");
    for (const char *var : {"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"}) {
        const QString dir = m_tmp.filePath(QString::fromLatin1(var));
        QVERIFY(QDir().mkpath(dir));
        qputenv(var, QFile::encodeName(dir));
    }
    // The completion runs `rankdeck-cli` from PATH, as in a user's shell.
    qputenv("PATH", QFile::encodeName(m_bin) + ':' + qgetenv("PATH"));

    // Two profiles besides "local", and runs named alpha (twice), beta and "two words".
    for (const QString &name : {u"gpubox"_s, u"gpufarm"_s}) {
        Profile p;
        p.name = name;
        p.transport = u"ssh"_s;
        ProfileNode n;
        n.host = name + u".example"_s;
        p.nodes << n;
        QString error;
        QVERIFY2(ProfileStore().save(p, true, &error), qPrintable(error));
    }
    Profile local;
    QList<ProfileError> errors;
    QVERIFY(ProfileStore().load(u"local"_s, &local, &errors));
    const QString runs = m_tmp.filePath(u"XDG_DATA_HOME/rankdeck/runs"_s);
    for (const QString &name : {u"alpha"_s, u"alpha"_s, u"beta"_s, u"two words"_s}) {
        RunRecord record;
        QString error;
        QVERIFY2(
            record.create(runs, RunRecord::newRunId(name), name, local, TrainingConfig(), &error),
            qPrintable(error));
    }

    qputenv("MANPAGER", "cat");
    qputenv("MANWIDTH", "120");
    const Result man = run(u"man"_s, {u"-l"_s, m_manPage});
    QVERIFY2(man.code == 0, qPrintable(man.err));
    m_rendered = man.out;
}

void TestManual::manPageRenders()
{
    QVERIFY2(m_rendered.startsWith(u"RANKDECK-CLI(1)"_s), qPrintable(m_rendered.left(200)));
    // NAME is the help's whole description paragraph, however many lines the help wraps it to.
    const Result top = run(m_bin + u"/rankdeck-cli"_s, {u"--help"_s});
    QString description = top.out.section(u"\n\n"_s, 1, 1).simplified();
    if (description.endsWith(u'.'))
        description.chop(1);
    QVERIFY2(description.size() > 20, qPrintable(top.out.left(300)));
    // man justifies and hyphenates ("in\u2010 spect"): compare without spaces and hyphens.
    auto bare = [](QString text) {
        text.removeIf([](QChar c) { return c.isSpace() || c == u'-' || c == QChar(0x2010); });
        return text;
    };
    QVERIFY2(bare(m_rendered).contains(bare(u"rankdeck-cli - "_s + description)),
             qPrintable(description));
    for (const QString &heading : {u"NAME"_s, u"SYNOPSIS"_s, u"DESCRIPTION"_s, u"COMMANDS"_s})
        QVERIFY2(m_rendered.contains(u"\n"_s + heading + u"\n"_s), qPrintable(heading));
    // Where profiles are kept is named as a variable, not as the home of whoever built it.
    QVERIFY(m_rendered.contains(u"$XDG_CONFIG_HOME/rankdeck/profiles"_s));
    QVERIFY(!m_rendered.contains(u"/@XDG"_s));
    QFile page(m_manPage);
    QVERIFY(page.open(QIODevice::ReadOnly));
    QVERIFY(!m_builderHome.isEmpty());
    QVERIFY(!page.readAll().contains(m_builderHome + "/."));
}

void TestManual::manPageHasEveryFlag_data()
{
    QTest::addColumn<QStringList>("command");
    // Every command the top-level help lists, found the way the page's generator finds them.
    const Result top = run(m_bin + u"/rankdeck-cli"_s, {u"--help"_s});
    static const QRegularExpression commandLine(u"^  ([a-z][a-z-]*)( |$)"_s,
                                                QRegularExpression::MultilineOption);
    QStringList commands;
    for (auto it = commandLine.globalMatch(top.out); it.hasNext();) {
        const QString c = it.next().captured(1);
        if (!commands.contains(c))
            commands << c;
    }
    QVERIFY(commands.size() >= 10);
    for (const QString &c : std::as_const(commands))
        QTest::newRow(qPrintable(c)) << QStringList{c};
    for (const QString &sub : {u"list"_s, u"show"_s, u"check"_s, u"add"_s, u"remove"_s})
        QTest::newRow(qPrintable(u"profiles "_s + sub)) << QStringList{u"profiles"_s, sub};
}

void TestManual::manPageHasEveryFlag()
{
    QFETCH(QStringList, command);
    const Result help = run(m_bin + u"/rankdeck-cli"_s, command + QStringList{u"--help"_s});
    QCOMPARE(help.code, 0);
    QVERIFY2(m_rendered.contains(u"\n   "_s + command.join(u' ') + u'\n'),
             qPrintable(command.join(u' ')));
    static const QRegularExpression flag(u"--[a-z][a-z0-9-]*"_s);
    int flags = 0;
    for (auto it = flag.globalMatch(help.out); it.hasNext(); ++flags) {
        const QString f = it.next().captured();
        QVERIFY2(m_rendered.contains(f), qPrintable(f));
    }
    QVERIFY(flags > 0); // at least --help
}

void TestManual::completionRegisters()
{
    const Result r =
        run(u"bash"_s, {u"-c"_s, u"source \"$0\" && complete -p rankdeck-cli"_s, m_completion});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QCOMPARE(r.out, u"complete -F _rankdeck_cli rankdeck-cli\n"_s);
}

void TestManual::completes_data()
{
    QTest::addColumn<QStringList>("words"); // the command line, the last word being completed
    QTest::addColumn<QStringList>("expected");
    QTest::newRow("commands l") << QStringList{u"l"_s} << QStringList{u"launch"_s, u"logs"_s};
    QTest::newRow("command pro") << QStringList{u"pro"_s}
                                 << QStringList{u"profile"_s, u"profiles"_s};
    QTest::newRow("top flags") << QStringList{u"--v"_s} << QStringList{u"--version"_s};
    QTest::newRow("launch flag") << QStringList{u"launch"_s, u"--nproc"_s}
                                 << QStringList{u"--nproc-per-node"_s};
    QTest::newRow("logs flag") << QStringList{u"logs"_s, u"--fo"_s} << QStringList{u"--follow"_s};
    QTest::newRow("profile names") << QStringList{u"launch"_s, u"--profile"_s, u"gpu"_s}
                                   << QStringList{u"gpubox"_s, u"gpufarm"_s};
    QTest::newRow("profile local")
        << QStringList{u"launch"_s, u"--profile"_s, u"lo"_s} << QStringList{u"local"_s};
    QTest::newRow("profiles subcommands")
        << QStringList{u"profiles"_s, u""_s}
        << QStringList{u"add"_s, u"check"_s, u"list"_s, u"remove"_s, u"show"_s};
    QTest::newRow("profiles check NAME")
        << QStringList{u"profiles"_s, u"check"_s, u"gpuf"_s} << QStringList{u"gpufarm"_s};
    QTest::newRow("show run name") << QStringList{u"show"_s, u"al"_s} << QStringList{u"alpha"_s};
    QTest::newRow("run name with a space")
        << QStringList{u"logs"_s, u"two"_s} << QStringList{u"two words"_s};
    QTest::newRow("compare --compare RUN")
        << QStringList{u"plot"_s, u"alpha"_s, u"--compare"_s, u"be"_s} << QStringList{u"beta"_s};
    QTest::newRow("nothing after --")
        << QStringList{u"launch"_s, u"--"_s, u"--zzz"_s} << QStringList{};
}

void TestManual::completes()
{
    QFETCH(QStringList, words);
    QFETCH(QStringList, expected);
    // What bash does on TAB: COMP_WORDS, COMP_CWORD at the last word, then the function.
    const QString script = u"source \"$0\"\n"
                           "COMP_WORDS=(rankdeck-cli \"$@\"); COMP_CWORD=$#; COMPREPLY=()\n"
                           "_rankdeck_cli\n"
                           "for w in \"${COMPREPLY[@]}\"; do printf '%s\\n' \"$w\"; done\n"_s;
    const Result r = run(u"bash"_s, QStringList{u"-c"_s, script, m_completion} + words);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QStringList got = r.out.split(u'\n', Qt::SkipEmptyParts);
    got.sort();
    QCOMPARE(got, expected);
}

QTEST_GUILESS_MAIN(TestManual)
#include "tst_manual.moc"
