// SPDX-License-Identifier: GPL-3.0-or-later
//
// The profile editor driven like a user: create a profile from the main window, validation as
// you type naming the field, editing an existing profile.
#include "accessiblenames.h"
#include "config/profilestore.h"
#include "mainwindow.h"
#include "mnemonics.h"
#include "profileeditordialog.h"
#include "sidepanel.h"
#include "transport/slurm/slurmprofileform.h"

#include <QApplication>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QToolButton>
#include <QtTest>

using namespace rankdeck;

namespace {
QPushButton *saveButton(ProfileEditorDialog *dialog)
{
    return dialog->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok);
}

void setCell(QTableWidget *table, int row, int column, const QString &text)
{
    QTableWidgetItem *item = table->item(row, column);
    QVERIFY(item);
    item->setText(text);
}
} // namespace

class TestProfileEditor : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase();
    void createProfileFromMainWindow();
    void validationNamesTheField_data();
    void validationNamesTheField();
    void editExistingProfile();
    void metricPatterns();
    void slurmProfile();
    void fiveNodeRowsAndVariablesRemoved();
    void keepsItsSize();
    void mnemonicsUnique_data();
    void mnemonicsUnique();

private:
    QTemporaryDir m_home;
};

void TestProfileEditor::initTestCase()
{
    QVERIFY(m_home.isValid());
    qputenv("XDG_CONFIG_HOME", m_home.filePath(QStringLiteral("config")).toUtf8());
    qputenv("XDG_DATA_HOME", m_home.filePath(QStringLiteral("data")).toUtf8());
    QCoreApplication::setOrganizationName(QStringLiteral("rankdeck-test"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_profileeditor"));
}

void TestProfileEditor::createProfileFromMainWindow()
{
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto *newButton =
        window.sidePanel()->findChild<QToolButton *>(QStringLiteral("newProfileButton"));
    QVERIFY(newButton);

    bool filled = false;
    // The editor is modal: fill it in from inside its event loop, as a user would.
    QTimer::singleShot(0, this, [&filled] {
        auto *dialog = qobject_cast<ProfileEditorDialog *>(QApplication::activeModalWidget());
        QVERIFY(dialog);
        QVERIFY(!saveButton(dialog)->isEnabled()); // no name, no nodes yet
        QTest::keyClicks(dialog->nameEdit(), QStringLiteral("cluster-a"));
        QTest::mouseClick(dialog->addNodeButton(), Qt::LeftButton);
        QTest::mouseClick(dialog->addNodeButton(), Qt::LeftButton);
        QCOMPARE(dialog->nodesTable()->rowCount(), 2);
        QVERIFY(!saveButton(dialog)->isEnabled()); // hosts still empty
        setCell(dialog->nodesTable(), 0, 0, QStringLiteral("gpu-node-1"));
        setCell(dialog->nodesTable(), 1, 0, QStringLiteral("gpu-node-2"));
        setCell(dialog->nodesTable(), 1, 1, QStringLiteral("2222"));
        setCell(dialog->nodesTable(), 0, 4, QStringLiteral("4"));
        setCell(dialog->nodesTable(), 1, 4, QStringLiteral("4"));
        QVERIFY2(saveButton(dialog)->isEnabled(),
                 qPrintable(dialog->problems().join(QLatin1Char('\n'))));
        QTest::mouseClick(saveButton(dialog), Qt::LeftButton);
        filled = true;
    });
    QTest::mouseClick(newButton, Qt::LeftButton);
    QVERIFY(filled);

    QListWidget *list = window.sidePanel()->profileList();
    QCOMPARE(list->item(0)->text(), QStringLiteral("local"));
    QVERIFY(!list->findItems(QStringLiteral("cluster-a"), Qt::MatchExactly).isEmpty());
    QCOMPARE(window.sidePanel()->currentProfile(), QStringLiteral("cluster-a"));

    // What the editor saved is what core reads back.
    ProfileStore store;
    Profile loaded;
    QList<ProfileError> errors;
    QVERIFY(store.load(QStringLiteral("cluster-a"), &loaded, &errors));
    QCOMPARE(loaded.transport, QStringLiteral("ssh"));
    QCOMPARE(loaded.nodes.size(), 2);
    QCOMPARE(loaded.nodes[0].host, QStringLiteral("gpu-node-1"));
    QCOMPARE(loaded.nodes[1].port, 2222);
    QCOMPARE(loaded.worldSize(), 8);
}

void TestProfileEditor::validationNamesTheField_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("host");
    QTest::addColumn<QString>("port");
    QTest::addColumn<QString>("ranks");
    QTest::addColumn<QString>("envName");
    QTest::addColumn<QString>("field"); // empty: valid

    QTest::newRow("valid") << "ok"
                           << "h"
                           << "22"
                           << "1"
                           << ""
                           << "";
    QTest::newRow("no name") << ""
                             << "h"
                             << "22"
                             << "1"
                             << ""
                             << "name";
    QTest::newRow("bad name") << "a b/c"
                              << "h"
                              << "22"
                              << "1"
                              << ""
                              << "name";
    QTest::newRow("no host") << "ok"
                             << ""
                             << "22"
                             << "1"
                             << ""
                             << "nodes[0].host";
    QTest::newRow("port out of range") << "ok"
                                       << "h"
                                       << "70000"
                                       << "1"
                                       << ""
                                       << "nodes[0].port";
    QTest::newRow("port not a number") << "ok"
                                       << "h"
                                       << "ssh"
                                       << "1"
                                       << ""
                                       << "nodes[0].port";
    QTest::newRow("zero ranks") << "ok"
                                << "h"
                                << "22"
                                << "0"
                                << ""
                                << "nodes[0].ranks_per_node";
    QTest::newRow("bad variable") << "ok"
                                  << "h"
                                  << "22"
                                  << "1"
                                  << "1BAD"
                                  << "environment";
}

void TestProfileEditor::validationNamesTheField()
{
    QFETCH(QString, name);
    QFETCH(QString, host);
    QFETCH(QString, port);
    QFETCH(QString, ranks);
    QFETCH(QString, envName);
    QFETCH(QString, field);

    ProfileEditorDialog dialog(nullptr);
    dialog.show();
    QTest::keyClicks(dialog.nameEdit(), name);
    QTest::mouseClick(dialog.addNodeButton(), Qt::LeftButton);
    setCell(dialog.nodesTable(), 0, 0, host);
    setCell(dialog.nodesTable(), 0, 1, port);
    setCell(dialog.nodesTable(), 0, 4, ranks);
    if (!envName.isEmpty()) {
        auto *env = dialog.findChild<QTableWidget *>(QStringLiteral("profileEnvironmentTable"));
        env->insertRow(0);
        env->setItem(0, 0, new QTableWidgetItem(envName));
        env->setItem(0, 1, new QTableWidgetItem(QStringLiteral("x")));
    }
    const QStringList problems = dialog.problems();
    if (field.isEmpty()) {
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
        QVERIFY(saveButton(&dialog)->isEnabled());
    } else {
        QVERIFY(!saveButton(&dialog)->isEnabled());
        bool named = false;
        for (const QString &p : problems)
            named = named || p.startsWith(field);
        QVERIFY2(named, qPrintable(problems.join(QLatin1Char('\n'))));
        // The problems are on screen, not only in the API.
        auto *label = dialog.findChild<QLabel *>(QStringLiteral("profileProblemsLabel"));
        QVERIFY(label->isVisible());
        QVERIFY(label->text().contains(field));
    }
}

void TestProfileEditor::metricPatterns()
{
    ProfileEditorDialog dialog(nullptr);
    dialog.show();
    QTest::keyClicks(dialog.nameEdit(), QStringLiteral("ok"));
    QTest::mouseClick(dialog.addNodeButton(), Qt::LeftButton);
    setCell(dialog.nodesTable(), 0, 0, QStringLiteral("h"));
    auto *metrics = dialog.findChild<QPlainTextEdit *>(QStringLiteral("profileMetricsEdit"));
    QVERIFY(metrics);
    metrics->setPlainText(QStringLiteral("tokens_per_s=([0-9.]+) tok/s\nacc=(\\d+"));
    const QStringList problems = dialog.problems();
    QVERIFY2(problems.filter(QStringLiteral("metrics:")).size() == 1 &&
                 problems.filter(QStringLiteral("acc=(\\d+")).size() == 1,
             qPrintable(problems.join(QLatin1Char('\n'))));
    QVERIFY(!saveButton(&dialog)->isEnabled());
    metrics->setPlainText(QStringLiteral("tokens_per_s=([0-9.]+) tok/s\n\n  acc=(\\d+)  "));
    QVERIFY2(dialog.problems().isEmpty(), qPrintable(dialog.problems().join(QLatin1Char('\n'))));
    QCOMPARE(dialog.profile().metricPatterns,
             (QStringList{QStringLiteral("tokens_per_s=([0-9.]+) tok/s"),
                          QStringLiteral("acc=(\\d+)")}));
}

void TestProfileEditor::editExistingProfile()
{
    ProfileStore store;
    Profile p;
    p.name = QStringLiteral("edit-me");
    p.transport = QStringLiteral("ssh");
    p.nodes = {ProfileNode{QStringLiteral("old-host"), 22, QString(), QString(), 2, 0}};
    QString error;
    QVERIFY2(store.save(p, true, &error), qPrintable(error));

    ProfileEditorDialog dialog(&store);
    dialog.setProfile(p, true);
    QVERIFY(dialog.nameEdit()->isReadOnly());
    QVERIFY(saveButton(&dialog)->isEnabled()); // its own name is not a clash
    setCell(dialog.nodesTable(), 0, 0, QStringLiteral("new-host"));
    dialog.show();
    QTest::mouseClick(saveButton(&dialog), Qt::LeftButton);
    QCOMPARE(dialog.result(), int(QDialog::Accepted));

    Profile loaded;
    QList<ProfileError> errors;
    QVERIFY(store.load(QStringLiteral("edit-me"), &loaded, &errors));
    QCOMPARE(loaded.nodes.value(0).host, QStringLiteral("new-host"));
    QCOMPARE(loaded.nodes.value(0).ranksPerNode, 2);

    // A new profile may not take an existing name.
    ProfileEditorDialog fresh(&store);
    QTest::keyClicks(fresh.nameEdit(), QStringLiteral("edit-me"));
    QVERIFY(!fresh.problems().filter(QStringLiteral("name:")).isEmpty());
}

// A Slurm profile: the node table gives way to the [slurm] form, validation names the field,
// the file has a [slurm] table and no [[nodes]], and editing it shows what was saved.
void TestProfileEditor::slurmProfile()
{
    ProfileStore store;
    ProfileEditorDialog dialog(&store);
    dialog.show();
    QTest::keyClicks(dialog.nameEdit(), QStringLiteral("hpc"));
    auto *transport = dialog.findChild<QComboBox *>(QStringLiteral("profileTransportCombo"));
    QVERIFY(transport);
    transport->setCurrentIndex(transport->findData(QStringLiteral("slurm")));
    auto *form = qobject_cast<SlurmProfileForm *>(dialog.kindForm(QStringLiteral("slurm")));
    QVERIFY(form);
    QVERIFY(form->isVisible());
    QVERIFY(!dialog.nodesTable()->isVisible());
    QVERIFY(dialog.findChild<QPushButton *>(QStringLiteral("testConnectionButton"))->isEnabled());

    auto *login = form->findChild<QLineEdit *>(QStringLiteral("slurmLoginEdit"));
    auto *partition = form->findChild<QLineEdit *>(QStringLiteral("slurmPartitionEdit"));
    auto *time = form->findChild<QLineEdit *>(QStringLiteral("slurmTimeEdit"));
    auto *sbatch = form->findChild<QLineEdit *>(QStringLiteral("slurmSbatchArgsEdit"));
    form->findChild<QSpinBox *>(QStringLiteral("slurmNodesSpin"))->setValue(4);
    form->findChild<QSpinBox *>(QStringLiteral("slurmNprocSpin"))->setValue(8);
    QTest::keyClicks(login, QStringLiteral("login.example:2222"));
    QTest::keyClicks(partition, QStringLiteral("gpu"));
    QTest::keyClicks(time, QStringLiteral("soon"));
    QVERIFY2(!dialog.problems().filter(QStringLiteral("slurm.time")).isEmpty(),
             qPrintable(dialog.problems().join(u'\n')));
    QVERIFY(!saveButton(&dialog)->isEnabled());
    time->clear();
    QTest::keyClicks(time, QStringLiteral("4:00:00"));
    QTest::keyClicks(sbatch, QStringLiteral("--nodes=9"));
    QVERIFY(!dialog.problems().filter(QStringLiteral("set by RankDeck")).isEmpty());
    sbatch->clear();
    QTest::keyClicks(sbatch, QStringLiteral("--exclusive --mem=0"));
    QVERIFY2(dialog.problems().isEmpty(), qPrintable(dialog.problems().join(u'\n')));
    QCOMPARE(dialog.profile().worldSize(), 32);
    QTest::mouseClick(saveButton(&dialog), Qt::LeftButton);
    QCOMPARE(dialog.result(), int(QDialog::Accepted));

    QFile file(store.filePath(QStringLiteral("hpc")));
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray toml = file.readAll();
    QVERIFY2(toml.contains("[slurm]") && !toml.contains("[[nodes]]"), toml.constData());
    Profile loaded;
    QList<ProfileError> errors;
    QVERIFY(store.load(QStringLiteral("hpc"), &loaded, &errors));
    const SlurmSettings slurm = SlurmSettings::of(loaded);
    QCOMPARE(slurm.login, QStringLiteral("login.example"));
    QCOMPARE(slurm.port, 2222);
    QCOMPARE(slurm.sbatchArgs,
             QStringList({QStringLiteral("--exclusive"), QStringLiteral("--mem=0")}));
    QCOMPARE(loaded.worldSize(), 32);

    ProfileEditorDialog edit(&store);
    edit.setProfile(loaded, true);
    QCOMPARE(qobject_cast<SlurmProfileForm *>(edit.kindForm(QStringLiteral("slurm")))->settings(),
             slurm);
    QCOMPARE(edit.profile(), loaded);
}

// Five node rows in view, and a variable added by mistake can be taken out again.
void TestProfileEditor::fiveNodeRowsAndVariablesRemoved()
{
    Profile p;
    p.name = QStringLiteral("vars");
    p.transport = QStringLiteral("ssh");
    for (int i = 0; i < 5; ++i)
        p.nodes << ProfileNode{QStringLiteral("node%1").arg(i), 22, QString(), QString(), 1, 0};
    p.environment = {{QStringLiteral("A"), QStringLiteral("1")},
                     {QStringLiteral("B"), QStringLiteral("2")}};
    ProfileEditorDialog dialog(nullptr);
    dialog.setProfile(p, false);
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    QTableWidget *nodes = dialog.nodesTable();
    const QRect view = nodes->viewport()->rect();
    QVERIFY2(view.contains(nodes->visualItemRect(nodes->item(4, 0))),
             qPrintable(QStringLiteral("viewport %1 px high").arg(view.height())));

    auto *table = dialog.findChild<QTableWidget *>(QStringLiteral("profileEnvironmentTable"));
    auto *remove = dialog.findChild<QPushButton *>(QStringLiteral("removeVariableButton"));
    QVERIFY(table && remove);
    QVERIFY(!remove->isEnabled());
    table->selectRow(0);
    QVERIFY(remove->isEnabled());
    QTest::mouseClick(remove, Qt::LeftButton);
    const QMap<QString, QString> left{{QStringLiteral("B"), QStringLiteral("2")}};
    QCOMPARE(dialog.profile().environment, left);
}

// Resized by the user, the editor opens at that size the next time.
void TestProfileEditor::keepsItsSize()
{
    QSize wider;
    {
        ProfileEditorDialog dialog(nullptr);
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        wider = dialog.size() + QSize(120, 60);
        dialog.resize(wider);
        QTRY_COMPARE(dialog.size(), wider);
        dialog.reject();
    }
    ProfileEditorDialog again(nullptr);
    QCOMPARE(again.size(), wider);
}

void TestProfileEditor::mnemonicsUnique_data()
{
    QTest::addColumn<QString>("transport");
    QTest::newRow("ssh") << QStringLiteral("ssh");
    QTest::newRow("slurm") << QStringLiteral("slurm");
}

// Alt+letter reaches one field, whichever kind's form is shown.
void TestProfileEditor::mnemonicsUnique()
{
    QFETCH(QString, transport);
    ProfileEditorDialog dialog(nullptr);
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    auto *combo = dialog.findChild<QComboBox *>(QStringLiteral("profileTransportCombo"));
    QVERIFY(combo);
    combo->setCurrentIndex(combo->findData(transport));
    const QStringList clashes = testing::clashingMnemonics(&dialog);
    QVERIFY2(clashes.isEmpty(), qPrintable(clashes.join(u'\n')));
    const QStringList nameless = testing::namelessControls(&dialog);
    QVERIFY2(nameless.isEmpty(), qPrintable(nameless.join(u'\n')));
}

QTEST_MAIN(TestProfileEditor)
#include "tst_profileeditor.moc"
