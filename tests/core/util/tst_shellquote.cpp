// SPDX-License-Identifier: GPL-3.0-or-later
//
// shell::quote() is what keeps every profile field and argument from becoming a command on a
// node. Each case is checked twice: the exact bytes quote() produces, and what a real /bin/sh
// makes of them (the word must come back byte for byte, and nothing in it may run).
#include "util/shellquote.h"

#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;

namespace {

struct ShellResult
{
    bool finished = false;
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

// Runs `shell -c command` in `directory` and returns what it printed.
ShellResult runShell(const QString &shell, const QByteArray &command, const QString &directory)
{
    QProcess p;
    p.setWorkingDirectory(directory);
    p.setProgram(shell);
    // QProcess passes arguments as UTF-8; the bytes of command reach the shell unchanged as long
    // as they are valid UTF-8, which the non-UTF-8 cases below check separately through a file.
    p.setArguments({QStringLiteral("-c"), QString::fromUtf8(command)});
    p.start();
    ShellResult r;
    r.finished = p.waitForFinished(10000) && p.exitStatus() == QProcess::NormalExit;
    r.exitCode = p.exitCode();
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

QStringList availableShells()
{
    QStringList shells;
    for (const char *s :
         {"/bin/sh", "/bin/bash", "/bin/dash", "/usr/bin/zsh", "/bin/ksh", "/bin/mksh"}) {
        if (QFileInfo(QString::fromLatin1(s)).isExecutable())
            shells << QString::fromLatin1(s);
    }
    return shells;
}

} // namespace

class TestShellQuote : public QObject
{
    Q_OBJECT
private slots:
    void quote_data();
    void quote();
    void roundTrip_data();
    void roundTrip();
    void rawBytesRoundTrip();
    void quoteAllKeepsWordBoundaries_data();
    void quoteAllKeepsWordBoundaries();
    void quoteAllOfNothingIsEmpty();
    void isValidVariableName_data();
    void isValidVariableName();
};

void TestShellQuote::quote_data()
{
    QTest::addColumn<QString>("word");
    QTest::addColumn<QByteArray>("expected");

    QTest::newRow("empty") << QString() << QByteArray("''");
    QTest::newRow("plain") << QStringLiteral("abc") << QByteArray("'abc'");
    QTest::newRow("spaces") << QStringLiteral("a b  c") << QByteArray("'a b  c'");
    QTest::newRow("single quote") << QStringLiteral("it's") << QByteArray("'it'\\''s'");
    QTest::newRow("only a quote") << QStringLiteral("'") << QByteArray("''\\'''");
    QTest::newRow("two quotes") << QStringLiteral("''") << QByteArray("''\\'''\\'''");
    QTest::newRow("already escaped")
        << QStringLiteral("'\\''") << QByteArray("''\\''\\'\\'''\\'''");
    QTest::newRow("dollar") << QStringLiteral("$HOME ${PATH} $(id)")
                            << QByteArray("'$HOME ${PATH} $(id)'");
    QTest::newRow("backticks") << QStringLiteral("`id`") << QByteArray("'`id`'");
    QTest::newRow("double quotes") << QStringLiteral("\"x\"") << QByteArray("'\"x\"'");
    QTest::newRow("backslash") << QStringLiteral("a\\b\\") << QByteArray("'a\\b\\'");
    QTest::newRow("newline") << QStringLiteral("a\nb") << QByteArray("'a\nb'");
    QTest::newRow("non-ASCII is UTF-8")
        << QStringLiteral(u"h\u00e9 \u65e5\u672c \U0001F600")
        << QByteArray("'h\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80'");
}

void TestShellQuote::quote()
{
    QFETCH(QString, word);
    QFETCH(QByteArray, expected);
    QCOMPARE(shell::quote(word), expected);
    QCOMPARE(shell::quote(word.toUtf8()), expected);
}

void TestShellQuote::roundTrip_data()
{
    QTest::addColumn<QString>("word");

    QTest::newRow("empty") << QString();
    QTest::newRow("spaces") << QStringLiteral("  two  leading and trailing  ");
    QTest::newRow("tab and carriage return") << QStringLiteral("a\tb\rc");
    QTest::newRow("single quote") << QStringLiteral("it's");
    QTest::newRow("only quotes") << QStringLiteral("'''");
    QTest::newRow("quote at both ends") << QStringLiteral("'x'");
    QTest::newRow("escaped quote") << QStringLiteral("'\\''");
    QTest::newRow("double quotes") << QStringLiteral("\"\"\"");
    QTest::newRow("dollar") << QStringLiteral("$HOME $0 $1 $@ $* $# $? $$ $!");
    QTest::newRow("command substitution") << QStringLiteral("$(touch pwned-subst)");
    QTest::newRow("backticks") << QStringLiteral("`touch pwned-backtick`");
    QTest::newRow("arithmetic") << QStringLiteral("$((6*7))");
    QTest::newRow("quote breakout") << QStringLiteral("'; touch pwned-breakout; echo '");
    QTest::newRow("double quote breakout") << QStringLiteral("\"; touch pwned-dq; echo \"");
    QTest::newRow("separators") << QStringLiteral("a; b && c || d | e & f");
    QTest::newRow("redirections") << QStringLiteral("> pwned-redirect < /etc/passwd 2>&1");
    QTest::newRow("glob") << QStringLiteral("* ? [a-z]");
    QTest::newRow("tilde") << QStringLiteral("~ ~root");
    QTest::newRow("history and braces") << QStringLiteral("!! !$ {a,b}");
    QTest::newRow("comment") << QStringLiteral("# not a comment");
    QTest::newRow("backslashes") << QStringLiteral("\\ \\\\ \\n \\'");
    QTest::newRow("printf format") << QStringLiteral("%s %d %% \\n");
    QTest::newRow("leading dash") << QStringLiteral("-n");
    QTest::newRow("newlines") << QStringLiteral("line1\nline2\n\n");
    QTest::newRow("newline then command") << QStringLiteral("x\ntouch pwned-newline");
    QTest::newRow("control characters") << QStringLiteral("\x01\x1b[31m\x7f");
    QTest::newRow("non-ASCII") << QStringLiteral(u"gr\u00fc\u00dfe \u65e5\u672c\u8a9e \U0001F600");
    QTest::newRow("right-to-left override") << QStringLiteral(u"\u202etxt.exe");
    QTest::newRow("long") << QString(20000, u'\'');
}

// The shell gets `printf %s <quoted>`: the word must come back exactly, in every POSIX shell
// installed here, and the directory it ran in must stay empty (no substitution ran).
void TestShellQuote::roundTrip()
{
    QFETCH(QString, word);
    const QStringList shells = availableShells();
    QVERIFY(shells.contains(QStringLiteral("/bin/sh")));
    for (const QString &sh : shells) {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const ShellResult r = runShell(sh, "printf %s " + shell::quote(word), dir.path());
        QVERIFY2(r.finished, qPrintable(sh));
        QVERIFY2(r.exitCode == 0, qPrintable(sh + QStringLiteral(": ") + QString::fromUtf8(r.err)));
        QVERIFY2(r.out == word.toUtf8(), qPrintable(sh + QStringLiteral(" printed ") +
                                                    QString::fromUtf8(r.out.toPercentEncoding())));
        QVERIFY2(r.err.isEmpty(), qPrintable(sh + QStringLiteral(": ") + QString::fromUtf8(r.err)));
        const QStringList left =
            QDir(dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden);
        QVERIFY2(left.isEmpty(), qPrintable(sh + QStringLiteral(" created ") + left.join(u' ')));
    }
}

// The QByteArray overload takes any byte but NUL (which no argument can hold), including bytes
// that are not UTF-8. The command goes through a script file so that nothing re-encodes it.
void TestShellQuote::rawBytesRoundTrip()
{
    QByteArray word;
    for (int c = 1; c < 256; ++c)
        word += char(c);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QFile script(dir.filePath(QStringLiteral("script.sh")));
    QVERIFY(script.open(QIODevice::WriteOnly));
    script.write("printf %s " + shell::quote(word) + " >out\n");
    script.close();

    QProcess p;
    p.setWorkingDirectory(dir.path());
    p.start(QStringLiteral("/bin/sh"), {script.fileName()});
    QVERIFY(p.waitForFinished(10000));
    QCOMPARE(p.exitCode(), 0);
    QFile out(dir.filePath(QStringLiteral("out")));
    QVERIFY(out.open(QIODevice::ReadOnly));
    QCOMPARE(out.readAll(), word);
}

void TestShellQuote::quoteAllKeepsWordBoundaries_data()
{
    QTest::addColumn<QStringList>("words");

    QTest::newRow("one") << QStringList{QStringLiteral("a")};
    QTest::newRow("empty words") << QStringList{QString(), QString(), QString()};
    QTest::newRow("spaces inside")
        << QStringList{QStringLiteral("a b"), QStringLiteral(" "), QStringLiteral("c")};
    QTest::newRow("quotes") << QStringList{QStringLiteral("'"), QStringLiteral("it's"),
                                           QStringLiteral("'x")};
    QTest::newRow("hostile") << QStringList{QStringLiteral("$(id)"), QStringLiteral("`id`"),
                                            QStringLiteral(";"), QStringLiteral("\n"),
                                            QStringLiteral("*")};
}

// `printf '<%s>'` prints one <…> per word the shell saw: no word split, merged or lost.
void TestShellQuote::quoteAllKeepsWordBoundaries()
{
    QFETCH(QStringList, words);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const ShellResult r =
        runShell(QStringLiteral("/bin/sh"), "printf '<%s>' " + shell::quoteAll(words), dir.path());
    QVERIFY(r.finished);
    QCOMPARE(r.exitCode, 0);
    QByteArray expected;
    for (const QString &w : words)
        expected += '<' + w.toUtf8() + '>';
    QCOMPARE(r.out, expected);
}

void TestShellQuote::quoteAllOfNothingIsEmpty()
{
    QCOMPARE(shell::quoteAll({}), QByteArray());
    QCOMPARE(shell::quoteAll({QString()}), QByteArray("''"));
    QCOMPARE(shell::quoteAll({QStringLiteral("a"), QStringLiteral("b c")}),
             QByteArray("'a' 'b c'"));
}

void TestShellQuote::isValidVariableName_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("valid");

    QTest::newRow("empty") << QString() << false;
    QTest::newRow("PATH") << QStringLiteral("PATH") << true;
    QTest::newRow("lower case") << QStringLiteral("cuda_visible") << true;
    QTest::newRow("underscore") << QStringLiteral("_") << true;
    QTest::newRow("underscore digit") << QStringLiteral("_1") << true;
    QTest::newRow("digits after letter") << QStringLiteral("A123") << true;
    QTest::newRow("leading digit") << QStringLiteral("1A") << false;
    QTest::newRow("only digits") << QStringLiteral("123") << false;
    QTest::newRow("dash") << QStringLiteral("A-B") << false;
    QTest::newRow("dot") << QStringLiteral("a.b") << false;
    QTest::newRow("space") << QStringLiteral("A B") << false;
    QTest::newRow("equals") << QStringLiteral("A=B") << false;
    QTest::newRow("trailing newline") << QStringLiteral("A\n") << false;
    QTest::newRow("dollar") << QStringLiteral("$A") << false;
    QTest::newRow("substitution") << QStringLiteral("A$(id)") << false;
    QTest::newRow("non-ASCII letter") << QStringLiteral(u"\u00c9T\u00c9") << false;
    QTest::newRow("fullwidth digit") << QStringLiteral(u"A\uff11") << false;
    QTest::newRow("NUL") << QString(QChar(u'\0')) << false;
}

void TestShellQuote::isValidVariableName()
{
    QFETCH(QString, name);
    QFETCH(bool, valid);
    QCOMPARE(shell::isValidVariableName(name), valid);
}

QTEST_GUILESS_MAIN(TestShellQuote)
#include "tst_shellquote.moc"
