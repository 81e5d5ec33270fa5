// SPDX-License-Identifier: GPL-3.0-or-later
//
// Full-resolution metrics as CSV (never the bucketed plot data). One row per point, long
// format, so ranks and metrics with different steps need no padding:
//     rank,metric,segment,step,wall_time_us,value
// Values are written in the shortest form that reads back exactly; NaN and ±Inf as nan, inf,
// -inf. The same format is the run record's metrics.csv.
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

class QIODevice;

namespace rankdeck {

class MetricsStore;

class CsvExport
{
public:
    static QByteArray header(); // with '\n'
    static QByteArray row(int rank, const QString &metric, int segment, qint64 step,
                          qint64 wallTimeUs, double value); // with '\n'
    static QString formatValue(double value);
    // One line of such a file split into its fields (RFC 4180 quoting); false when a quote is
    // left open.
    static bool splitLine(const QString &line, QStringList *fields);
    static bool parseValue(QStringView text, double *value);

    // ranks/metrics empty: all of them.
    static bool write(const MetricsStore &store, QIODevice *out, QString *errorMessage = nullptr,
                      const QList<int> &ranks = {}, const QStringList &metrics = {});
    static bool write(const MetricsStore &store, const QString &fileName,
                      QString *errorMessage = nullptr, const QList<int> &ranks = {},
                      const QStringList &metrics = {});

    struct Row
    {
        int rank = 0;
        QString metric;
        int segment = 0;
        qint64 step = 0;
        qint64 wallTimeUs = 0;
        double value = 0.0;
    };
    // Reads a file in this format. Bad lines are skipped; the first one is named (file:line and
    // field) in *errorMessage and the result is false, with every good row in *rows.
    static bool read(const QString &fileName, QList<Row> *rows, QString *errorMessage = nullptr);
    // The same from byte `from` on, of a file another process may be appending to: the rows of
    // its complete lines; *end is the byte after the last of them (where the next read starts).
    static bool readFrom(const QString &fileName, qint64 from, QList<Row> *rows, qint64 *end,
                         QString *errorMessage = nullptr);
};

} // namespace rankdeck
