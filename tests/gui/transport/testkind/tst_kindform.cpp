// SPDX-License-Identifier: GPL-3.0-or-later
//
// The profile editor asks the registries, not a list of its own: the tests' "echo" kind and its
// form, registered here alone, show up in the transport list, bring their form (beside the node
// table: echo does not choose its nodes), and the kind's check names its field.
#include "echokind.h"
#include "echoprofileform.h"

#include "profileeditordialog.h"
#include "transport/profilekindform.h"
#include "transport/transportkind.h"

#include <QComboBox>
#include <QLineEdit>
#include <QTableWidget>
#include <QtTest>

#include <memory>

using namespace rankdeck;

class TestKindForm : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase();
    void formByKind();
};

void TestKindForm::initTestCase()
{
    QVERIFY(TransportKindRegistry::add(std::make_unique<testkind::EchoKind>()));
    QVERIFY(ProfileKindForms::add(QStringLiteral("echo"), [](QWidget *parent) {
        return new testkind::EchoProfileForm(parent);
    }));
}

void TestKindForm::formByKind()
{
    ProfileEditorDialog dialog(nullptr);
    dialog.show();
    QTest::keyClicks(dialog.nameEdit(), QStringLiteral("echoes"));
    auto *combo = dialog.findChild<QComboBox *>(QStringLiteral("profileTransportCombo"));
    QVERIFY(combo);
    const int index = combo->findData(QStringLiteral("echo"));
    QVERIFY(index >= 0);
    QCOMPARE(combo->itemText(index), QStringLiteral("Echo (tests only)"));
    combo->setCurrentIndex(index);
    ProfileKindForm *form = dialog.kindForm(QStringLiteral("echo"));
    QVERIFY(form);
    QVERIFY(form->isVisible());
    QVERIFY(!dialog.kindForm(QStringLiteral("slurm"))->isVisible());
    QVERIFY(dialog.nodesTable()->isVisible());
    dialog.addNode();
    dialog.nodesTable()->item(0, 0)->setText(QStringLiteral("localhost"));
    QVERIFY2(!dialog.problems().filter(QStringLiteral("echo.greeting")).isEmpty(),
             qPrintable(dialog.problems().join(u'\n')));
    QTest::keyClicks(form->findChild<QLineEdit *>(QStringLiteral("echoGreetingEdit")),
                     QStringLiteral("hello"));
    QVERIFY2(dialog.problems().isEmpty(), qPrintable(dialog.problems().join(u'\n')));
    const Profile p = dialog.profile();
    QCOMPARE(p.transport, QStringLiteral("echo"));
    QCOMPARE(p.section.value(QStringLiteral("greeting")).toString(), QStringLiteral("hello"));
    QCOMPARE(p.nodes.size(), 1);

    // Edited again: the form shows what the profile holds.
    ProfileEditorDialog edit(nullptr);
    edit.setProfile(p, true);
    QCOMPARE(edit.profile(), p);
}

QTEST_MAIN(TestKindForm)
#include "tst_kindform.moc"
