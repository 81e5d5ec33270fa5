// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/rundiffmodel.h"

#include "record/runrecord.h"
#include "store/csvexport.h"
#include "store/metricsstore.h"
#include "util/translation.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonObject>
#include <QMap>

#include <algorithm>
#include <cmath>
#include <iterator>

namespace rankdeck {

namespace {

// Worker flags as flag → value ("--shuffle" → ""), in order of first appearance.
QList<std::pair<QString, QString>> parseFlags(const QStringList &args)
{
    QList<std::pair<QString, QString>> flags;
    for (qsizetype i = 0; i < args.size(); ++i) {
        const QString &a = args[i];
        if (!a.startsWith(QLatin1String("--"))) {
            flags.append({QStringLiteral("(argument %1)").arg(i), a});
            continue;
        }
        const qsizetype eq = a.indexOf(QLatin1Char('='));
        if (eq > 0) {
            flags.append({a.left(eq), a.mid(eq + 1)});
        } else if (i + 1 < args.size() && !args[i + 1].startsWith(QLatin1String("--"))) {
            flags.append({a, args[i + 1]});
            ++i;
        } else {
            flags.append({a, QString()});
        }
    }
    return flags;
}

QString formatNumber(double v)
{
    return std::isnan(v) ? QStringLiteral("–") : QString::number(v, 'g', 6);
}

QString formatDuration(qint64 us)
{
    if (us <= 0)
        return tr("not ended");
    return tr("%1 s").arg(double(us) / 1e6, 0, 'f', 1);
}

} // namespace

bool RunSummary::higherIsBetter(const QString &metric)
{
    const QString m = metric.toLower();
    static const char *const kWords[] = {"acc", "samples_per_s", "throughput",  "f1",
                                         "auc", "score",         "tokens_per_s"};
    return std::any_of(std::begin(kWords), std::end(kWords),
                       [&](const char *word) { return m.contains(QLatin1String(word)); });
}

bool RunSummary::fromRecord(const QString &directory, RunSummary *s, QString *error)
{
    RunRecord record;
    if (!record.open(directory, error))
        return false;
    const RunInfo info = record.info();
    s->id = info.id;
    s->name = info.name;
    s->profile = record.profile().name;
    s->worldSize = info.worldSize;
    s->program = record.config().isProgram();
    s->arguments = s->program ? record.config().program : record.config().workerArguments;
    const QJsonObject state = record.readState();
    const qint64 started = state.value(QStringLiteral("started_us")).toInteger();
    const qint64 ended = state.value(QStringLiteral("ended_us")).toInteger();
    s->durationUs = started > 0 && ended > started ? ended - started : 0;

    MetricsStore store;
    const QString csv = QDir(directory).filePath(QStringLiteral("metrics.csv"));
    if (QFileInfo::exists(csv)) {
        QList<CsvExport::Row> rows;
        QString ignored; // a bad row loses only itself here
        CsvExport::read(csv, &rows, &ignored);
        for (const CsvExport::Row &r : std::as_const(rows))
            store.append(r.rank, r.metric, r.step, r.wallTimeUs, r.value);
    }
    s->metrics = store.metricNames();
    s->finalValues.clear();
    s->bestValues.clear();
    for (const QString &m : std::as_const(s->metrics)) {
        double sum = 0;
        int n = 0;
        for (int rank : store.ranks(m)) {
            MetricPoint p;
            if (store.lastPoint(rank, m, &p) && std::isfinite(p.value)) {
                sum += p.value;
                ++n;
            }
        }
        s->finalValues.append(n > 0 ? sum / n : std::nan(""));
        // Best of the mean across ranks per step, unsmoothed, at full resolution.
        const MetricCurve mean =
            store.curve(MetricsStore::MeanCurve, m, MetricXAxis::Step, 0.0, 0.0, 0.0, 0);
        const bool up = higherIsBetter(m);
        double best = std::nan("");
        for (double v : mean.y) {
            if (std::isfinite(v) && (std::isnan(best) || (up ? v > best : v < best)))
                best = v;
        }
        s->bestValues.append(best);
    }
    return true;
}

RunDiffModel::RunDiffModel(QObject *parent) : QAbstractTableModel(parent) {}

void RunDiffModel::setRuns(const QList<RunSummary> &runs)
{
    beginResetModel();
    m_runs = runs;
    rebuild();
    endResetModel();
}

void RunDiffModel::rebuild()
{
    m_rows.clear();
    if (m_runs.size() < 2)
        return;
    const auto addIfDiffers = [this](const QString &key, const QString &label,
                                     const QStringList &values) {
        for (const QString &v : values) {
            if (v != values.first()) {
                m_rows.append(Row{key, label, values});
                return;
            }
        }
    };
    // Flags, in the order the first run that has each names them.
    QList<QMap<QString, QString>> flagMaps;
    QStringList flagOrder;
    bool anyProgram = false;
    for (const RunSummary &r : std::as_const(m_runs)) {
        anyProgram = anyProgram || r.program;
        QMap<QString, QString> map;
        for (const auto &[flag, value] : parseFlags(r.arguments)) {
            map.insert(flag, value);
            if (!flagOrder.contains(flag))
                flagOrder << flag;
        }
        flagMaps.append(map);
    }
    if (anyProgram) {
        QStringList values;
        for (const RunSummary &r : std::as_const(m_runs))
            values << (r.program ? r.arguments.join(QLatin1Char(' '))
                                 : tr("worker: %1").arg(r.arguments.join(QLatin1Char(' '))));
        addIfDiffers(QStringLiteral("program"), tr("Command line"), values);
    } else {
        for (const QString &flag : std::as_const(flagOrder)) {
            QStringList values;
            for (const auto &map : std::as_const(flagMaps)) {
                const auto it = map.constFind(flag);
                values << (it == map.cend() ? tr("(not given)")
                                            : (it->isEmpty() ? tr("(set)") : *it));
            }
            addIfDiffers(QStringLiteral("flag:") + flag, flag, values);
        }
    }
    QStringList profiles, sizes, durations;
    for (const RunSummary &r : std::as_const(m_runs)) {
        profiles << r.profile;
        sizes << QString::number(r.worldSize);
        durations << formatDuration(r.durationUs);
    }
    addIfDiffers(QStringLiteral("profile"), tr("Profile"), profiles);
    addIfDiffers(QStringLiteral("world_size"), tr("World size"), sizes);
    addIfDiffers(QStringLiteral("duration"), tr("Duration"), durations);
    QStringList metrics;
    for (const RunSummary &r : std::as_const(m_runs))
        for (const QString &m : r.metrics)
            if (!metrics.contains(m))
                metrics << m;
    metrics.sort();
    for (const QString &m : std::as_const(metrics)) {
        QStringList finals, bests;
        for (const RunSummary &r : std::as_const(m_runs)) {
            const qsizetype i = r.metrics.indexOf(m);
            finals << formatNumber(i < 0 ? std::nan("") : r.finalValues[i]);
            bests << formatNumber(i < 0 ? std::nan("") : r.bestValues[i]);
        }
        addIfDiffers(QStringLiteral("final:") + m, tr("%1 final").arg(m), finals);
        addIfDiffers(QStringLiteral("best:") + m,
                     RunSummary::higherIsBetter(m) ? tr("%1 best (highest)").arg(m)
                                                   : tr("%1 best (lowest)").arg(m),
                     bests);
    }
}

QStringList RunDiffModel::keys() const
{
    QStringList out;
    for (const Row &r : m_rows)
        out << r.key;
    return out;
}

int RunDiffModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int RunDiffModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_runs.size());
}

QVariant RunDiffModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row &row = m_rows[index.row()];
    switch (role) {
    case Qt::DisplayRole:
    case Qt::ToolTipRole:
        return row.values.value(index.column());
    case KeyRole:
        return row.key;
    default:
        return {};
    }
}

QVariant RunDiffModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (role != Qt::DisplayRole)
        return {};
    if (orientation == Qt::Horizontal)
        return section >= 0 && section < m_runs.size() ? QVariant(m_runs[section].name)
                                                       : QVariant();
    return section >= 0 && section < m_rows.size() ? QVariant(m_rows[section].label) : QVariant();
}

QString RunDiffModel::toText() const
{
    if (m_runs.size() < 2)
        return {};
    QList<int> widths;
    int labelWidth = 0;
    for (const Row &r : m_rows)
        labelWidth = std::max(labelWidth, int(r.label.size()));
    for (int c = 0; c < m_runs.size(); ++c) {
        int w = int(m_runs[c].name.size());
        for (const Row &r : m_rows)
            w = std::max(w, int(r.values.value(c).size()));
        widths << w;
    }
    QString out = QString(labelWidth, QLatin1Char(' '));
    for (int c = 0; c < m_runs.size(); ++c)
        out += QStringLiteral("  ") + m_runs[c].name.leftJustified(widths[c]);
    out += QLatin1Char('\n');
    for (const Row &r : m_rows) {
        QString line = r.label.leftJustified(labelWidth);
        for (int c = 0; c < m_runs.size(); ++c)
            line += QStringLiteral("  ") + r.values.value(c).leftJustified(widths[c]);
        out += line.trimmed().isEmpty() ? QString() : line.trimmed() + QLatin1Char('\n');
    }
    if (m_rows.isEmpty())
        out += tr("(nothing differs)\n");
    return out;
}

} // namespace rankdeck
