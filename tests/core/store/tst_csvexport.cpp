// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/csvexport.h"
#include "store/metricsstore.h"

#include <QBuffer>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <limits>

using namespace rankdeck;

class TestCsvExport : public QObject
{
    Q_OBJECT
private slots:
    void values_data();
    void values();
    void fullResolutionNotBucketed();
    void roundTripThroughFile();
    void filterRanksAndMetrics();
    void badFileNamesLine_data();
    void badFileNamesLine();
    void unwritableTarget();
};

void TestCsvExport::values_data()
{
    QTest::addColumn<double>("value");
    QTest::addColumn<QString>("text");
    QTest::newRow("nan") << std::numeric_limits<double>::quiet_NaN() << QStringLiteral("nan");
    QTest::newRow("inf") << std::numeric_limits<double>::infinity() << QStringLiteral("inf");
    QTest::newRow("-inf") << -std::numeric_limits<double>::infinity() << QStringLiteral("-inf");
    QTest::newRow("tenth") << 0.1 << QStringLiteral("0.1");
    QTest::newRow("integer") << 3.0 << QStringLiteral("3");
    QTest::newRow("tiny") << 1.25e-300 << QStringLiteral("1.25e-300");
}

void TestCsvExport::values()
{
    QFETCH(double, value);
    QFETCH(QString, text);
    QCOMPARE(CsvExport::formatValue(value), text);
    double back = 0;
    QVERIFY(CsvExport::parseValue(text, &back));
    if (std::isnan(value))
        QVERIFY(std::isnan(back));
    else
        QCOMPARE(back, value);
}

void TestCsvExport::fullResolutionNotBucketed()
{
    MetricsStore store;
    for (int i = 0; i < 5000; ++i)
        store.append(1, metric::Loss, i, 1'000'000 + i, 1.0 / (i + 1));
    store.append(1, metric::Loss, 10, 9'000'000, 0.5); // restart: segment 1
    QBuffer buf;
    QVERIFY(buf.open(QIODevice::WriteOnly));
    QString error;
    QVERIFY2(CsvExport::write(store, &buf, &error), qPrintable(error));
    const QList<QByteArray> lines = buf.data().split('\n');
    // Header, 5001 rows, and the empty string after the final newline.
    QCOMPARE(lines.size(), 1 + 5001 + 1);
    QCOMPARE(lines[0], QByteArray("rank,metric,segment,step,wall_time_us,value"));
    QCOMPARE(lines[1], QByteArray("1,loss,0,0,1000000,1"));
    QCOMPARE(lines[2], QByteArray("1,loss,0,1,1000001,0.5"));
    QCOMPARE(lines[5001], QByteArray("1,loss,1,10,9000000,0.5"));
}

void TestCsvExport::roundTripThroughFile()
{
    QTemporaryDir dir;
    MetricsStore store;
    store.append(0, metric::Loss, 1, 10, 0.30000000000000004);
    store.append(0, QStringLiteral("weird, \"quoted\""), 1, 10, -2.5);
    store.append(3, metric::LearningRate, 7, 11, std::numeric_limits<double>::quiet_NaN());
    const QString path = dir.filePath(QStringLiteral("out.csv"));
    QString error;
    QVERIFY2(CsvExport::write(store, path, &error), qPrintable(error));
    QList<CsvExport::Row> rows;
    QVERIFY2(CsvExport::read(path, &rows, &error), qPrintable(error));
    QCOMPARE(rows.size(), 3);
    QCOMPARE(rows[0].rank, 0);
    QCOMPARE(rows[0].value, 0.30000000000000004);
    const auto weird = std::find_if(rows.begin(), rows.end(),
                                    [](const CsvExport::Row &r) { return r.value == -2.5; });
    QVERIFY(weird != rows.end());
    QCOMPARE(weird->metric, QStringLiteral("weird, \"quoted\""));
    QCOMPARE(rows[2].rank, 3);
    QCOMPARE(rows[2].step, 7);
    QVERIFY(std::isnan(rows[2].value));
}

void TestCsvExport::filterRanksAndMetrics()
{
    MetricsStore store;
    for (int r = 0; r < 4; ++r) {
        store.append(r, metric::Loss, 1, 1, r);
        store.append(r, metric::LearningRate, 1, 1, r);
    }
    QBuffer buf;
    QVERIFY(buf.open(QIODevice::WriteOnly));
    QVERIFY(CsvExport::write(store, &buf, nullptr, {1, 3}, {metric::Loss}));
    QCOMPARE(buf.data(),
             QByteArray(
                 "rank,metric,segment,step,wall_time_us,value\n1,loss,0,1,1,1\n3,loss,0,1,1,3\n"));
}

void TestCsvExport::badFileNamesLine_data()
{
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<int>("line");
    QTest::addColumn<QString>("field");
    QTest::addColumn<int>("goodRows");
    const QByteArray header = CsvExport::header();
    QTest::newRow("bad rank") << header + "x,loss,0,1,1,1\n" << 2 << QStringLiteral("rank") << 0;
    QTest::newRow("bad value") << header + "0,loss,0,1,1,1\n0,loss,0,2,2,abc\n"
                               << 3 << QStringLiteral("value") << 1;
    QTest::newRow("rows after a bad one kept")
        << header + "0,loss,0,1,1,1\n0,lo\n0,loss,0,2,2,2\n0,loss,0,x,2,2\n"
        << 3 << QStringLiteral("row") << 2;
    QTest::newRow("short row") << header + "0,loss,0\n" << 2 << QStringLiteral("row") << 0;
    QTest::newRow("bad step") << header + "0,loss,0,1.5,1,1\n" << 2 << QStringLiteral("step") << 0;
}

void TestCsvExport::badFileNamesLine()
{
    QFETCH(QByteArray, content);
    QFETCH(int, line);
    QFETCH(QString, field);
    QFETCH(int, goodRows);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("bad.csv"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(content);
    f.close();
    QList<CsvExport::Row> rows;
    QString error;
    QVERIFY(!CsvExport::read(path, &rows, &error));
    QVERIFY2(error.contains(QStringLiteral("%1:%2").arg(path).arg(line)), qPrintable(error));
    QVERIFY2(error.contains(field), qPrintable(error));
    QCOMPARE(rows.size(), goodRows);
}

void TestCsvExport::unwritableTarget()
{
    MetricsStore store;
    store.append(0, metric::Loss, 1, 1, 1);
    QString error;
    QVERIFY(!CsvExport::write(store, QStringLiteral("/nonexistent-dir/x/out.csv"), &error));
    QVERIFY2(error.contains(QStringLiteral("/nonexistent-dir/x/out.csv")), qPrintable(error));
}

QTEST_GUILESS_MAIN(TestCsvExport)
#include "tst_csvexport.moc"
