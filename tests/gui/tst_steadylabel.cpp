// SPDX-License-Identifier: GPL-3.0-or-later
//
// SteadyLabel: a text that changes within the room it has does not lay the window out again (a
// LayoutRequest to the window); one that needs another line or more width does, and the text is
// the label's as before.
#include "steadylabel.h"

#include <QLabel>
#include <QTest>
#include <QVBoxLayout>

using namespace rankdeck;

namespace {

// Counts the layout requests the window gets.
class LayoutRequests : public QObject
{
public:
    int count = 0;

protected:
    bool eventFilter(QObject *watched, QEvent *event) override
    {
        if (event->type() == QEvent::LayoutRequest)
            ++count;
        return QObject::eventFilter(watched, event);
    }
};

} // namespace

class TestSteadyLabel : public QObject
{
    Q_OBJECT
private slots:
    void changesThatFitDoNotRelayout_data();
    void changesThatFitDoNotRelayout();
};

void TestSteadyLabel::changesThatFitDoNotRelayout_data()
{
    QTest::addColumn<bool>("wordWrap");
    QTest::addColumn<QString>("first");
    QTest::addColumn<QString>("same");   // needs the room `first` has
    QTest::addColumn<QString>("larger"); // needs more
    QTest::newRow("one line") << false << QStringLiteral("ETA 12 s") << QStringLiteral("ETA 13 s")
                              << QStringLiteral("ETA 1 h 12 min, and a good deal more text");
    QTest::newRow("wrapped")
        << true << QStringLiteral("rank 40 is 12 % slower")
        << QStringLiteral("rank 41 is 13 % slower")
        << QStringLiteral("rank 40 is 12 % slower than the median; ").repeated(8);
}

void TestSteadyLabel::changesThatFitDoNotRelayout()
{
    QFETCH(bool, wordWrap);
    QFETCH(QString, first);
    QFETCH(QString, same);
    QFETCH(QString, larger);
    QWidget window;
    window.resize(300, 200);
    auto *layout = new QVBoxLayout(&window);
    auto *label = new QLabel;
    label->setObjectName(QStringLiteral("steady"));
    label->setWordWrap(wordWrap);
    auto *steady = new SteadyLabel(label, &window);
    layout->addWidget(steady);
    layout->addStretch();
    steady->setText(first);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    LayoutRequests requests;
    window.installEventFilter(&requests);
    QCoreApplication::processEvents();
    requests.count = 0;

    const QSize hint = steady->sizeHint();
    for (int i = 0; i < 20; ++i) {
        steady->setText(i % 2 ? first : same);
        QCoreApplication::processEvents();
    }
    QCOMPARE(requests.count, 0);
    QCOMPARE(steady->sizeHint(), hint);
    QCOMPARE(window.findChild<QLabel *>(QStringLiteral("steady"))->text(), first);

    steady->setText(larger);
    QTRY_VERIFY(requests.count > 0);
    QVERIFY(steady->sizeHint() != hint);
    QTRY_COMPARE(label->geometry(), steady->rect());
    QCOMPARE(label->text(), larger);
}

QTEST_MAIN(TestSteadyLabel)
#include "tst_steadylabel.moc"
