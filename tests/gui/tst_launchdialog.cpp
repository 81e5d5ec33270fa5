// SPDX-License-Identifier: GPL-3.0-or-later
//
// The launch form's "Sync folder" row: prefilled with the folder of the script (the first
// argument ending in .py, else the program) when it is a local file, off until checked, its
// problems named, and remembered per profile like the other program fields.
#include "accessiblenames.h"
#include "launchdialog.h"
#include "mnemonics.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;
using namespace Qt::StringLiterals;

class TestLaunchDialog : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void prefill_data();
    void prefill();
    void configAndProblems();
    void rememberedPerProfile();
    void mnemonicsUnique_data();
    void mnemonicsUnique();
    void resizable();

private:
    QTemporaryDir m_tmp;
    QString m_proj;
};

void TestLaunchDialog::initTestCase()
{
    QVERIFY(m_tmp.isValid());
    qputenv("XDG_CONFIG_HOME", QFile::encodeName(m_tmp.filePath(u"config"_s)));
    QCoreApplication::setOrganizationName(u"rankdeck-test"_s);
    QSettings().clear();
    m_proj = m_tmp.filePath(u"proj"_s);
    QVERIFY(QDir().mkpath(m_proj + u"/bin"_s));
    for (const QString &f : {u"/train.py"_s, u"/bin/trainer"_s}) {
        QFile file(m_proj + f);
        QVERIFY(file.open(QIODevice::WriteOnly));
    }
}

void TestLaunchDialog::prefill_data()
{
    QTest::addColumn<QString>("command");
    QTest::addColumn<QString>("folder");
    QTest::newRow("script") << u"python3 PROJ/train.py --epochs 2"_s << u"PROJ"_s;
    QTest::newRow("program") << u"PROJ/bin/trainer --lr 3"_s << u"PROJ/bin"_s;
    QTest::newRow("only on the nodes") << u"python3 /nonexistent/train.py"_s << QString();
    QTest::newRow("bare program") << u"torchrun train.py"_s << QString();
}

void TestLaunchDialog::prefill()
{
    QFETCH(QString, command);
    QFETCH(QString, folder);
    LaunchDialog dialog(nullptr);
    dialog.setTask(u"program"_s);
    dialog.setProgramCommand(command.replace(u"PROJ"_s, m_proj));
    QCOMPARE(dialog.syncFolder(), folder.replace(u"PROJ"_s, m_proj));
    QVERIFY(!dialog.syncEnabled());
    QVERIFY(dialog.config().syncDirectory.isEmpty());
    // A folder the user typed stays when the command changes.
    dialog.setSyncFolder(true, m_tmp.path());
    dialog.setProgramCommand(u"python3 "_s + m_proj + u"/train.py"_s);
    QCOMPARE(dialog.syncFolder(), m_tmp.path());
}

void TestLaunchDialog::configAndProblems()
{
    LaunchDialog dialog(nullptr);
    dialog.setTask(u"program"_s);
    dialog.setProgramCommand(u"python3 "_s + m_proj + u"/train.py"_s);
    dialog.setSyncFolder(true, QString());
    QVERIFY2(dialog.problems().isEmpty(), qPrintable(dialog.problems().join(u'\n')));
    QCOMPARE(dialog.config().syncDirectory, m_proj);
    dialog.setSyncFolder(true, u"/nonexistent/proj"_s);
    QVERIFY(dialog.problems().join(u'\n').contains(
        u"sync folder: \"/nonexistent/proj\" does not exist"_s));
    QVERIFY(!dialog.launchButton()->isEnabled());
    dialog.setSyncFolder(true, m_proj + u"/train.py"_s);
    QVERIFY(dialog.problems().join(u'\n').contains(
        u"sync folder: \"%1/train.py\" is not a directory"_s.arg(m_proj)));
    dialog.setSyncFolder(true, m_proj);
    auto *dir = dialog.findChild<QLineEdit *>(u"launchProgramDirEdit"_s);
    QVERIFY(dir);
    dir->setText(u"/srv/work"_s);
    QVERIFY(dialog.problems().join(u'\n').contains(
        u"program directory: with a sync folder, \"/srv/work\" must be a folder inside it"_s));
    dir->setText(u"sub"_s);
    QVERIFY(dialog.problems().isEmpty());
    // The CLI's rules, in the CLI's words after the form's own field name (LaunchRequest).
    dialog.setRunName(u"a/b"_s);
    QVERIFY2(dialog.problems().contains(u"run name: \"a/b\" must not contain '/'"_s),
             qPrintable(dialog.problems().join(u'\n')));
    dialog.setRunName(QString());
    QVERIFY(dialog.problems().isEmpty());
    QCOMPARE(dialog.config().workingDirectory, u"sub"_s);
}

void TestLaunchDialog::rememberedPerProfile()
{
    {
        LaunchDialog dialog(nullptr);
        dialog.setTask(u"program"_s);
        dialog.setProgramCommand(u"python3 "_s + m_proj + u"/train.py"_s);
        dialog.setSyncFolder(true, QString());
        // Warm start: off unless asked for, then in the config (launch --warm).
        auto *warm = dialog.findChild<QCheckBox *>(u"launchProgramWarmCheck"_s);
        QVERIFY(warm);
        QVERIFY(warm->isEnabled());
        QVERIFY(!dialog.config().warmPython);
        warm->setChecked(true);
        QVERIFY(dialog.config().warmPython);
        auto *buttons = dialog.findChild<QDialogButtonBox *>();
        QVERIFY(buttons);
        emit buttons->accepted();
    }
    LaunchDialog again(nullptr);
    again.setTask(u"program"_s);
    QVERIFY(again.syncEnabled());
    QCOMPARE(again.syncFolder(), m_proj);
    QCOMPARE(again.config().syncDirectory, m_proj);
    QVERIFY(again.config().warmPython);
    // The built-in tasks have no use for it.
    again.setTask(u"linear"_s);
    QVERIFY(!again.findChild<QCheckBox *>(u"launchProgramWarmCheck"_s)->isEnabled());
    QVERIFY(!again.config().warmPython);
}

void TestLaunchDialog::mnemonicsUnique_data()
{
    QTest::addColumn<QString>("task");
    QTest::newRow("built-in worker") << u"linear"_s;
    QTest::newRow("your program") << u"program"_s;
}

// Alt+letter reaches one field of the form, whichever task shows which rows.
void TestLaunchDialog::mnemonicsUnique()
{
    QFETCH(QString, task);
    LaunchDialog dialog(nullptr);
    dialog.setTask(task);
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    const QStringList clashes = rankdeck::testing::clashingMnemonics(&dialog);
    QVERIFY2(clashes.isEmpty(), qPrintable(clashes.join(u'\n')));
    const QStringList nameless = rankdeck::testing::namelessControls(&dialog);
    QVERIFY2(nameless.isEmpty(), qPrintable(nameless.join(u'\n')));
}

// A long command or placeholder can be read by making the dialog wider; the size is kept.
void TestLaunchDialog::resizable()
{
    QSize wider;
    {
        LaunchDialog dialog(nullptr);
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        QVERIFY(dialog.maximumWidth() > dialog.width() + 400);
        wider = dialog.size() + QSize(300, 40);
        dialog.resize(wider);
        QTRY_COMPARE(dialog.size(), wider);
        dialog.reject();
    }
    LaunchDialog again(nullptr);
    again.show();
    QVERIFY(QTest::qWaitForWindowExposed(&again));
    QCOMPARE(again.size(), wider);
}

QTEST_MAIN(TestLaunchDialog)
#include "tst_launchdialog.moc"
