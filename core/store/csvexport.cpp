// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/csvexport.h"

#include "util/atomicfile.h"
#include "util/translation.h"

#include "store/metricsstore.h"

#include <QCoreApplication>
#include <QFile>
#include <QIODevice>
#include <QLocale>

#include <cmath>
#include <limits>

namespace rankdeck {

namespace {

// Metric names come from workers; quote them when they could break the row.
QByteArray csvField(const QString &s)
{
    QByteArray b = s.toUtf8();
    if (b.contains(',') || b.contains('"') || b.contains('\n') || b.contains('\r')) {
        b.replace("\"", "\"\"");
        return '"' + b + '"';
    }
    return b;
}

// Splits one CSV line (RFC 4180 quoting) into fields.
bool splitCsv(const QString &line, QStringList *fields)
{
    fields->clear();
    QString cur;
    bool quoted = false;
    for (qsizetype i = 0; i < line.size(); ++i) {
        const QChar c = line[i];
        if (quoted) {
            if (c == u'"') {
                if (i + 1 < line.size() && line[i + 1] == u'"') {
                    cur += u'"';
                    ++i;
                } else {
                    quoted = false;
                }
            } else {
                cur += c;
            }
        } else if (c == u'"') {
            quoted = true;
        } else if (c == u',') {
            fields->append(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    fields->append(cur);
    return !quoted;
}

} // namespace

bool CsvExport::splitLine(const QString &line, QStringList *fields)
{
    return splitCsv(line, fields);
}

QByteArray CsvExport::header()
{
    return QByteArrayLiteral("rank,metric,segment,step,wall_time_us,value\n");
}

QString CsvExport::formatValue(double value)
{
    if (std::isnan(value))
        return QStringLiteral("nan");
    if (std::isinf(value))
        return value > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    return QString::number(value, 'g', QLocale::FloatingPointShortest);
}

bool CsvExport::parseValue(QStringView text, double *value)
{
    const QStringView t = text.trimmed();
    if (t.compare(u"nan", Qt::CaseInsensitive) == 0) {
        *value = std::numeric_limits<double>::quiet_NaN();
        return true;
    }
    if (t.compare(u"inf", Qt::CaseInsensitive) == 0 ||
        t.compare(u"+inf", Qt::CaseInsensitive) == 0) {
        *value = std::numeric_limits<double>::infinity();
        return true;
    }
    if (t.compare(u"-inf", Qt::CaseInsensitive) == 0) {
        *value = -std::numeric_limits<double>::infinity();
        return true;
    }
    bool ok = false;
    const double d = t.toDouble(&ok);
    if (ok)
        *value = d;
    return ok;
}

QByteArray CsvExport::row(int rank, const QString &metric, int segment, qint64 step,
                          qint64 wallTimeUs, double value)
{
    QByteArray out;
    out.reserve(64 + metric.size());
    out += QByteArray::number(rank);
    out += ',';
    out += csvField(metric);
    out += ',';
    out += QByteArray::number(segment);
    out += ',';
    out += QByteArray::number(step);
    out += ',';
    out += QByteArray::number(wallTimeUs);
    out += ',';
    out += formatValue(value).toLatin1();
    out += '\n';
    return out;
}

bool CsvExport::write(const MetricsStore &store, QIODevice *out, QString *errorMessage,
                      const QList<int> &ranks, const QStringList &metrics)
{
    auto fail = [&](const QString &why) {
        if (errorMessage)
            *errorMessage = why;
        return false;
    };
    if (!out || !out->isWritable())
        return fail(tr("CSV export: the output is not writable"));
    if (out->write(header()) < 0)
        return fail(tr("CSV export: %1").arg(out->errorString()));
    const QList<int> rankList = ranks.isEmpty() ? store.ranks() : ranks;
    const QStringList names = metrics.isEmpty() ? store.metricNames() : metrics;
    QByteArray buf;
    for (int rank : rankList) {
        for (const QString &name : names) {
            const QList<MetricSegment> segs = store.segments(rank, name);
            for (int s = 0; s < segs.size(); ++s) {
                for (const MetricPoint &p : segs[s].points) {
                    buf += row(rank, name, s, p.step, p.wallTimeUs, p.value);
                    if (buf.size() > (1 << 20)) {
                        if (out->write(buf) != buf.size())
                            return fail(tr("CSV export: %1").arg(out->errorString()));
                        buf.clear();
                    }
                }
            }
        }
    }
    if (!buf.isEmpty() && out->write(buf) != buf.size())
        return fail(tr("CSV export: %1").arg(out->errorString()));
    return true;
}

bool CsvExport::write(const MetricsStore &store, const QString &fileName, QString *errorMessage,
                      const QList<int> &ranks, const QStringList &metrics)
{
    // A failed export never leaves a half-written file behind, and a device or FIFO is written
    // to, never replaced by a regular file.
    AtomicFile file(fileName);
    QString error;
    if (!file.open(&error)) {
        if (errorMessage)
            *errorMessage = error;
        return false;
    }
    if (!write(store, file.device(), &error, ranks, metrics)) {
        file.cancel();
        if (errorMessage)
            *errorMessage = tr("%1: %2").arg(fileName, error);
        return false;
    }
    if (!file.commit(&error)) {
        if (errorMessage)
            *errorMessage = error;
        return false;
    }
    return true;
}

bool CsvExport::read(const QString &fileName, QList<Row> *rows, QString *errorMessage)
{
    qint64 end = 0;
    return readFrom(fileName, 0, rows, &end, errorMessage);
}

bool CsvExport::readFrom(const QString &fileName, qint64 from, QList<Row> *rows, qint64 *end,
                         QString *errorMessage)
{
    *end = from;
    QFile file(fileName);
    if (!file.open(QIODevice::ReadOnly) || !file.seek(from)) {
        if (errorMessage)
            *errorMessage = tr("cannot read %1: %2").arg(fileName, file.errorString());
        return false;
    }
    qint64 lineNo = 0;
    bool ok = true;
    QStringList f;
    while (!file.atEnd()) {
        QByteArray raw = file.readLine();
        ++lineNo;
        const bool terminated = raw.endsWith('\n');
        // An unterminated last line is a row the launcher is writing, or was when it died:
        // skip it (a later read from *end gets it whole).
        if (!terminated && file.atEnd())
            break;
        *end = file.pos();
        while (raw.endsWith('\n') || raw.endsWith('\r'))
            raw.chop(1);
        if (lineNo == 1 && raw.startsWith("rank,"))
            continue;
        if (raw.isEmpty())
            continue;
        // A bad line is skipped (a run record must not lose what follows a damaged row); the
        // first one is reported.
        auto bad = [&](const QString &field) {
            if (ok && errorMessage)
                *errorMessage = tr("%1:%2: bad field \"%3\"").arg(fileName).arg(lineNo).arg(field);
            ok = false;
            return true;
        };
        if (!splitCsv(QString::fromUtf8(raw), &f) || f.size() != 6) {
            bad(tr("row (expected rank,metric,segment,step,wall_time_us,value)"));
            continue;
        }
        Row r;
        bool good = false;
        r.rank = f[0].toInt(&good);
        if (!good || r.rank < 0) {
            bad(QStringLiteral("rank"));
            continue;
        }
        r.metric = f[1];
        if (r.metric.isEmpty()) {
            bad(QStringLiteral("metric"));
            continue;
        }
        r.segment = f[2].toInt(&good);
        if (!good) {
            bad(QStringLiteral("segment"));
            continue;
        }
        r.step = f[3].toLongLong(&good);
        if (!good) {
            bad(QStringLiteral("step"));
            continue;
        }
        r.wallTimeUs = f[4].toLongLong(&good);
        if (!good) {
            bad(QStringLiteral("wall_time_us"));
            continue;
        }
        if (!parseValue(f[5], &r.value)) {
            bad(QStringLiteral("value"));
            continue;
        }
        rows->append(r);
    }
    return ok;
}

} // namespace rankdeck
