// SPDX-License-Identifier: GPL-3.0-or-later
//
// printableText / printableLabel: what RankDeck prints of others' bytes (rank output, run
// names, hosts) never reaches a terminal as a control sequence, never breaks a table row, and
// stays bounded.
#include "util/printabletext.h"

#include <QTest>

using namespace rankdeck;

class TestPrintableText : public QObject
{
    Q_OBJECT

private slots:
    void label_data()
    {
        QTest::addColumn<QString>("in");
        QTest::addColumn<QString>("out");
        QTest::newRow("plain") << QStringLiteral("linear-64") << QStringLiteral("linear-64");
        QTest::newRow("newline") << QStringLiteral("a\nb") << QStringLiteral("a\u240Ab");
        QTest::newRow("carriage return") << QStringLiteral("a\rb") << QStringLiteral("a\u240Db");
        QTest::newRow("tab") << QStringLiteral("a\tb") << QStringLiteral("a\u2409b");
        QTest::newRow("colour") << QStringLiteral("\x1b[31mred\x1b[0m") << QStringLiteral("red");
        QTest::newRow("title OSC")
            << QStringLiteral("\x1b]0;pwned\x07name") << QStringLiteral("name");
        QTest::newRow("clear screen") << QStringLiteral("x\x1b[2Jy") << QStringLiteral("xy");
        QTest::newRow("lone ESC") << QStringLiteral("x\x1b") << QStringLiteral("x");
        QTest::newRow("DEL") << QStringLiteral("a\x7f") << QStringLiteral("a\u2421");
        QTest::newRow("unicode") << QStringLiteral("läuft ✓") << QStringLiteral("läuft ✓");
    }
    void label()
    {
        QFETCH(QString, in);
        QFETCH(QString, out);
        QCOMPARE(printableLabel(in), out);
    }

    void longLabelIsBounded()
    {
        const QString name(10240, QLatin1Char('n'));
        const QString l = printableLabel(name, 32);
        QCOMPARE(l, QString(32, QLatin1Char('n')) + QChar(0x2026));
        // Never cut inside a character.
        const QString umlauts(100, QChar(0x00e4)); // two bytes each in UTF-8
        const QString u = printableLabel(umlauts, 33);
        QCOMPARE(u, QString(16, QChar(0x00e4)) + QChar(0x2026));
    }

    void textKeepsTabs()
    {
        bool cut = true;
        QCOMPARE(printableText("a\tb\x01", 0, &cut), QStringLiteral("a\tb\u2401"));
        QVERIFY(!cut);
        QCOMPARE(printableText("\xff", 0), QString(QChar(0xfffd)));
    }
};

QTEST_GUILESS_MAIN(TestPrintableText)
#include "tst_printabletext.moc"
