// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/rundiffmodel.h"

#include "models/metricnames.h"
#include "record/runrecord.h"
#include "store/csvexport.h"
#include "store/metricsstore.h"
#include "util/translation.h"

#include <QDir>
#include <QFileInfo>
#include <QHash>
#include <QJsonObject>
#include <QMap>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

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

// Decimals that show v to 6 significant digits, its trailing zeros dropped.
int fixedDecimals(double v)
{
    if (v == 0 || !std::isfinite(v))
        return 0;
    int decimals = std::clamp(5 - int(std::floor(std::log10(std::abs(v)))), 0, 17);
    QString s = QString::number(v, 'f', decimals);
    while (decimals > 0 && s.endsWith(QLatin1Char('0'))) {
        s.chop(1);
        --decimals;
    }
    return decimals;
}

int mantissaDecimals(double v)
{
    if (!std::isfinite(v))
        return 0;
    QString s = QString::number(v, 'e', 5);
    s.truncate(s.indexOf(QLatin1Char('e')));
    int decimals = 5;
    while (decimals > 0 && s.endsWith(QLatin1Char('0'))) {
        s.chop(1);
        --decimals;
    }
    return decimals;
}

// The numbers of one row with as many decimals as the most precise of them needs, so that
// 0.05 and 0.005 read 0.050 and 0.005 and their digits line up. Beyond 8 decimals the zeros
// would hide the digits, so such a row is in scientific notation, all of it alike.
QStringList formatAligned(const QList<double> &values)
{
    constexpr int MaxFixedDecimals = 8;
    int decimals = 0;
    for (double v : values)
        decimals = std::max(decimals, fixedDecimals(v));
    const bool scientific = decimals > MaxFixedDecimals;
    if (scientific) {
        decimals = 0;
        for (double v : values)
            decimals = std::max(decimals, mantissaDecimals(v));
    }
    QStringList out;
    for (double v : values)
        out << (std::isnan(v) ? QStringLiteral("–")
                              : QString::number(v, scientific ? 'e' : 'f', decimals));
    return out;
}

// Flag values as numbers when all are: integers as given (a --seed may not fit a double
// exactly), the others aligned. False, and nothing changed, when one is not a number.
bool alignNumbers(QStringList *values)
{
    bool integers = true;
    QList<double> numbers;
    for (const QString &v : std::as_const(*values)) {
        bool ok = false;
        const double d = v.toDouble(&ok);
        if (!ok || !std::isfinite(d))
            return false;
        bool isInteger = false;
        v.toLongLong(&isInteger);
        integers = integers && isInteger;
        numbers << d;
    }
    if (integers) {
        for (QString &v : *values)
            v = QString::number(v.toLongLong());
    } else {
        *values = formatAligned(numbers);
    }
    return true;
}

QString formatDuration(qint64 us)
{
    if (us <= 0)
        return tr("not ended");
    return tr("%1 s").arg(double(us) / 1e6, 0, 'f', 1);
}

// rankdeck-worker's switches: given, they are on; not given, off.
bool isWorkerSwitch(const QString &flag)
{
    static const QStringList switches = {
        QStringLiteral("--shuffle"),
        QStringLiteral("--resume"),
        QStringLiteral("--control-stdin"),
        QStringLiteral("--no-overlap"),
        QStringLiteral("--no-flight-recorder"),
    };
    return switches.contains(flag);
}

// The metrics people read after the loss, in the order they ask about them: how fast, how
// much of it waiting, how much memory; the learning rate last, as it mostly echoes a setting.
const QStringList &readingOrder()
{
    static const QStringList order = {metric::StepTimeMs,  metric::SamplesPerSec,
                                      metric::CommWaitMs,  metric::ComputeMs,
                                      metric::GpuMemBytes, metric::LearningRate};
    return order;
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

QString RunSummary::workerDefault(const QString &flag, const QStringList &arguments)
{
    // parseWorkerOptions()'s defaults (worker/workeroptions.cpp). The worker has no Qt, so core
    // cannot call it; tst_rundiffmodel holds the two together. Identity and paths (--rank,
    // --master-port, --run-dir) are left out: the launcher sets them, not a default.
    static const QHash<QString, QString> fixed = {
        {QStringLiteral("--task"), QStringLiteral("linear")},
        {QStringLiteral("--steps"), QStringLiteral("100")},
        {QStringLiteral("--momentum"), QStringLiteral("0")},
        {QStringLiteral("--schedule"), QStringLiteral("constant")},
        {QStringLiteral("--warmup-steps"), QStringLiteral("0")},
        {QStringLiteral("--clip-grad-norm"), QStringLiteral("0")},
        {QStringLiteral("--seed"), QStringLiteral("0")},
        {QStringLiteral("--accum-steps"), QStringLiteral("1")},
        {QStringLiteral("--backend"), QStringLiteral("auto")},
        {QStringLiteral("--rendezvous-timeout"), QStringLiteral("60")},
        {QStringLiteral("--collective-timeout"), QStringLiteral("300")},
        {QStringLiteral("--mlp-width"), QStringLiteral("64")},
        {QStringLiteral("--mlp-depth"), QStringLiteral("2")},
        {QStringLiteral("--loss"), QStringLiteral("mse")},
        {QStringLiteral("--log-every"), QStringLiteral("1")},
        {QStringLiteral("--telemetry"), QStringLiteral("on")},
        {QStringLiteral("--step-delay-ms"), QStringLiteral("0")},
        {QStringLiteral("--cpu-affinity"), QStringLiteral("auto")},
    };
    if (isWorkerSwitch(flag))
        return QStringLiteral("no");
    if (const auto it = fixed.constFind(flag); it != fixed.cend())
        return *it;
    QHash<QString, QString> given; // the last one wins, as in the worker's parser
    for (const auto &[f, value] : parseFlags(arguments))
        given.insert(f, value);
    const QString task = given.value(QStringLiteral("--task"), QStringLiteral("linear"));
    const QString optimizer = given.value(QStringLiteral("--optimizer"),
                                          task == QLatin1String("charlm") ? QStringLiteral("adamw")
                                                                          : QStringLiteral("sgd"));
    const bool adamw = optimizer == QLatin1String("adamw");
    if (flag == QLatin1String("--optimizer"))
        return QString(optimizer);
    if (flag == QLatin1String("--lr"))
        return adamw ? QStringLiteral("0.003") : QStringLiteral("0.01");
    if (flag == QLatin1String("--weight-decay"))
        return adamw ? QStringLiteral("0.01") : QStringLiteral("0");
    if (flag == QLatin1String("--batch-size"))
        return task == QLatin1String("linear")   ? QStringLiteral("20")
               : task == QLatin1String("charlm") ? QStringLiteral("16")
                                                 : QStringLiteral("32");
    if (flag == QLatin1String("--dataset-size")) {
        if (task == QLatin1String("linear"))
            return QStringLiteral("1000");
        if (task == QLatin1String("mlp"))
            return QStringLiteral("4096");
    }
    return {};
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

void RunDiffModel::addIfDiffers(Row row, const QStringList &compared)
{
    const QStringList &values = compared.isEmpty() ? row.values : compared;
    if (std::any_of(values.cbegin(), values.cend(),
                    [&](const QString &v) { return v != values.first(); }))
        m_rows.append(std::move(row));
}

void RunDiffModel::rebuild()
{
    m_rows.clear();
    if (m_runs.size() < 2)
        return;
    QStringList metrics;
    for (const RunSummary &r : std::as_const(m_runs))
        for (const QString &m : r.metrics)
            if (!metrics.contains(m))
                metrics << m;
    if (metrics.removeAll(metric::Loss) > 0)
        addMetricRows(metric::Loss);
    for (const QString &m : readingOrder()) {
        if (metrics.removeAll(m) > 0)
            addMetricRows(m);
    }
    QStringList durations;
    for (const RunSummary &r : std::as_const(m_runs))
        durations << formatDuration(r.durationUs);
    addIfDiffers(Row{QStringLiteral("duration"), tr("Duration"), QStringLiteral("duration"),
                     durations, true});

    addFlagRows();
    QStringList profiles, sizes;
    for (const RunSummary &r : std::as_const(m_runs)) {
        profiles << r.profile;
        sizes << QString::number(r.worldSize);
    }
    addIfDiffers(
        Row{QStringLiteral("profile"), tr("Profile"), QStringLiteral("profile"), profiles});
    addIfDiffers(Row{QStringLiteral("world_size"), tr("World size"), QStringLiteral("world_size"),
                     sizes, true});

    metrics.sort();
    for (const QString &m : std::as_const(metrics))
        addMetricRows(m);
}

void RunDiffModel::addMetricRows(const QString &m)
{
    QList<double> finals, bests;
    for (const RunSummary &r : std::as_const(m_runs)) {
        const qsizetype i = r.metrics.indexOf(m);
        finals << (i < 0 ? std::nan("") : r.finalValues.value(i, std::nan("")));
        bests << (i < 0 ? std::nan("") : r.bestValues.value(i, std::nan("")));
    }
    const QString name = metric::displayName(m);
    addIfDiffers(Row{QStringLiteral("final:") + m, tr("%1: final").arg(name), m,
                     formatAligned(finals), true});
    addIfDiffers(Row{QStringLiteral("best:") + m,
                     RunSummary::higherIsBetter(m) ? tr("%1: best (highest)").arg(name)
                                                   : tr("%1: best (lowest)").arg(name),
                     m, formatAligned(bests), true});
}

void RunDiffModel::addFlagRows()
{
    const bool anyProgram =
        std::any_of(m_runs.cbegin(), m_runs.cend(), [](const RunSummary &r) { return r.program; });
    if (anyProgram) {
        QStringList values;
        for (const RunSummary &r : std::as_const(m_runs))
            values << (r.program ? r.arguments.join(QLatin1Char(' '))
                                 : tr("worker: %1").arg(r.arguments.join(QLatin1Char(' '))));
        addIfDiffers(
            Row{QStringLiteral("program"), tr("Command line"), QStringLiteral("program"), values});
        return;
    }
    // Flags, in the order the first run that has each names them.
    QList<QMap<QString, QString>> flagMaps;
    QStringList flagOrder;
    for (const RunSummary &r : std::as_const(m_runs)) {
        QMap<QString, QString> map;
        for (const auto &[flag, value] : parseFlags(r.arguments)) {
            map.insert(flag, value);
            if (!flagOrder.contains(flag))
                flagOrder << flag;
        }
        flagMaps.append(map);
    }
    // Flags no run gives whose defaults follow others (--lr follows --optimizer, which
    // follows --task): two runs of different tasks trained with different ones.
    for (const char *flag :
         {"--optimizer", "--lr", "--weight-decay", "--batch-size", "--dataset-size"}) {
        if (!flagOrder.contains(QLatin1String(flag)))
            flagOrder << QLatin1String(flag);
    }
    for (const QString &flag : std::as_const(flagOrder)) {
        QStringList used; // what the worker used, or a placeholder for nothing
        QList<bool> defaulted;
        for (qsizetype i = 0; i < m_runs.size(); ++i) {
            const auto it = flagMaps[i].constFind(flag);
            const QString fallback = it == flagMaps[i].cend()
                                         ? RunSummary::workerDefault(flag, m_runs[i].arguments)
                                         : QString();
            defaulted << !fallback.isEmpty();
            if (it == flagMaps[i].cend())
                used << (fallback.isEmpty() ? tr("(not given)") : fallback);
            else if (it->isEmpty())
                used << (isWorkerSwitch(flag) ? QStringLiteral("yes") : tr("(set)"));
            else
                used << *it;
        }
        Row row{QStringLiteral("flag:") + flag, flag, flag, used};
        row.numeric = alignNumbers(&row.values);
        const QStringList compared = row.values;
        for (qsizetype i = 0; i < row.values.size(); ++i) {
            if (defaulted[i])
                row.values[i] = tr("%1 (default)").arg(row.values[i]);
        }
        addIfDiffers(std::move(row), compared);
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
    case Qt::TextAlignmentRole:
        return row.numeric ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter)) : QVariant();
    case KeyRole:
        return row.key;
    default:
        return {};
    }
}

QVariant RunDiffModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal) {
        if (section < 0 || section >= m_runs.size())
            return {};
        if (role == Qt::DisplayRole)
            return m_runs[section].name;
        if (role == Qt::ToolTipRole)
            return m_runs[section].id;
        return {};
    }
    if (section < 0 || section >= m_rows.size())
        return {};
    const Row &row = m_rows[section];
    switch (role) {
    case Qt::DisplayRole:
        return row.label;
    case Qt::ToolTipRole:
        return row.id;
    case KeyRole:
        return row.key;
    default:
        return {};
    }
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
            line += QStringLiteral("  ") + (r.numeric ? r.values.value(c).rightJustified(widths[c])
                                                      : r.values.value(c).leftJustified(widths[c]));
        out += line.trimmed().isEmpty() ? QString() : line.trimmed() + QLatin1Char('\n');
    }
    if (m_rows.isEmpty())
        out += tr("(nothing differs)\n");
    return out;
}

} // namespace rankdeck
