// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/rankdifferencemodel.h"

#include "models/rankpickermodel.h"
#include "store/logstore.h"

#include <algorithm>
#include <cstdlib>

namespace rankdeck {

namespace {

// The value most ranks share and how many share it; ties go to the first value seen.
template <typename T> std::pair<T, int> mostCommon(const QList<T> &values)
{
    QHash<T, int> counts;
    T best{};
    int bestCount = 0;
    for (const T &v : values) {
        const int c = ++counts[v];
        if (c > bestCount) {
            best = v;
            bestCount = c;
        }
    }
    return {best, bestCount};
}

// Numbers left out ("step 12 loss -0.25" → "step # loss #"): a loop, not a regular expression,
// as it runs over every rank's last line each second.
QString withoutNumbers(const QString &line)
{
    const QString in = line.trimmed();
    QString out;
    out.reserve(in.size());
    const auto isDigit = [](QChar c) { return c >= u'0' && c <= u'9'; };
    const auto isHex = [&isDigit](QChar c) {
        return isDigit(c) || (c >= u'a' && c <= u'f') || (c >= u'A' && c <= u'F');
    };
    for (qsizetype i = 0; i < in.size();) {
        const QChar c = in[i];
        const bool signedNumber = (c == u'-' || c == u'+') && i + 1 < in.size() &&
                                  isDigit(in[i + 1]) && (i == 0 || !in[i - 1].isLetterOrNumber());
        if (!isDigit(c) && !signedNumber) {
            out += c;
            ++i;
            continue;
        }
        ++i;
        if (c == u'0' && i < in.size() && (in[i] == u'x' || in[i] == u'X')) {
            ++i;
            while (i < in.size() && isHex(in[i]))
                ++i;
        } else {
            while (i < in.size() && (isDigit(in[i]) || in[i] == u'.'))
                ++i;
        }
        out += u'#';
    }
    return out;
}

} // namespace

RankDifferenceModel::RankDifferenceModel(QObject *parent) : QAbstractTableModel(parent) {}

QList<RankDifference> RankDifferenceModel::differences(const QList<RankStatus> &ranks,
                                                       const QHash<int, QString> &lastLines)
{
    QList<QString> labels, shapes;
    QList<qint64> steps;
    labels.reserve(ranks.size());
    shapes.reserve(ranks.size());
    steps.reserve(ranks.size());
    for (const RankStatus &s : ranks) {
        labels << RankPickerModel::labelOf(s);
        shapes << withoutNumbers(lastLines.value(s.rank));
        steps << s.shownStep();
    }
    const auto [label, labelCount] = mostCommon(labels);
    const auto [shape, shapeCount] = mostCommon(shapes);
    const auto n = int(ranks.size());
    // Only a majority makes the others stand out: half the ranks finished and half running is
    // two halves, not 256 outliers.
    const bool labelMajority = labelCount * 2 > n && labelCount < n;
    const bool shapeMajority = shapeCount * 2 > n && shapeCount < n;
    // Steps spread while a run goes (each rank a step or two apart): the median, not the most
    // common step, is where the ranks are.
    QList<qint64> reported;
    for (qint64 st : std::as_const(steps))
        if (st >= 0)
            reported << st;
    qint64 median = -1;
    qint64 tolerance = StepTolerance;
    if (!reported.isEmpty()) {
        const auto middle = reported.begin() + reported.size() / 2;
        std::nth_element(reported.begin(), middle, reported.end());
        median = *middle;
        for (qint64 &st : reported)
            st = std::abs(st - median);
        std::nth_element(reported.begin(), middle, reported.end());
        tolerance = std::max(tolerance, MadFactor * *middle);
    }
    QList<RankDifference> out;
    for (int i = 0; i < n; ++i) {
        const RankStatus &s = ranks[i];
        RankDifference d;
        if (labelMajority && labels[i] != label)
            d.how << tr("%1, most are %2").arg(labels[i], label);
        if (median >= 0 && steps[i] >= 0 && std::abs(steps[i] - median) > tolerance)
            d.how << tr("step %1, the median %2").arg(steps[i]).arg(median);
        else if (median >= 0 && steps[i] < 0)
            d.how << tr("no step yet, the median %1").arg(median);
        if (shapeMajority && shapes[i] != shape)
            d.how << (lastLines.value(s.rank).isEmpty() ? tr("no output") : tr("other last line"));
        if (d.how.isEmpty())
            continue;
        d.rank = s.rank;
        d.host = s.host;
        d.lastLine = lastLines.value(s.rank);
        out << d;
    }
    std::sort(out.begin(), out.end(),
              [](const RankDifference &a, const RankDifference &b) { return a.rank < b.rank; });
    return out;
}

QHash<int, QString> RankDifferenceModel::lastLines(const LogStore &store)
{
    QHash<int, QString> out;
    for (int rank : store.ranks()) {
        const qint64 count = store.lineCount(rank);
        if (count <= 0)
            continue;
        const QList<LogLine> last = store.recentLines(rank, count - 1, 1);
        if (!last.isEmpty())
            out.insert(rank, last.constLast().text);
    }
    return out;
}

void RankDifferenceModel::setDifferences(const QList<RankDifference> &differences)
{
    if (differences == m_rows)
        return;
    // A short list that changes as a whole (ranks catch up, others fall behind): a reset.
    beginResetModel();
    m_rows = differences;
    endResetModel();
}

int RankDifferenceModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int RankDifferenceModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RankDifferenceModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const RankDifference &d = m_rows[index.row()];
    if (role == RankRole)
        return d.rank;
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    switch (Column(index.column())) {
    case RankColumn:
        return d.rank;
    case HostColumn:
        return d.host;
    case HowColumn:
        return d.how.join(QStringLiteral("; "));
    case LastLineColumn:
        return d.lastLine;
    case ColumnCount:
        break;
    }
    return {};
}

QVariant RankDifferenceModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (Column(section)) {
    case RankColumn:
        return tr("Rank");
    case HostColumn:
        return tr("Host");
    case HowColumn:
        return tr("How it differs");
    case LastLineColumn:
        return tr("Last line");
    case ColumnCount:
        break;
    }
    return {};
}

} // namespace rankdeck
