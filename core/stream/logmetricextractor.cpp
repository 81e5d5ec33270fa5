// SPDX-License-Identifier: GPL-3.0-or-later
#include "stream/logmetricextractor.h"

#include <cmath>
#include <limits>

namespace rankdeck {

namespace {

// A number as Python, C++ and most loggers print it, nan and inf included.
const QString kNumber =
    QStringLiteral(R"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)\b)");

const QRegularExpression &defaultPattern()
{
    // name: optional prefixes joined by '_' (val_, train_, top1_…), then a known metric word;
    // optionally quoted (dict reprs, JSON); then ':' or '=' or plain spaces; then the number.
    static const QRegularExpression re(
        QStringLiteral(
            R"((?<![\w.])['"]?((?:[a-z0-9]+_)*(?:loss|acc|accuracy|lr|ppl|perplexity))['"]?)"
            R"(\s*(?:[:=]\s*|\s+)()") +
            kNumber + QStringLiteral(R"()(?![\w.]))"),
        QRegularExpression::CaseInsensitiveOption);
    return re;
}

const QRegularExpression &stepPattern()
{
    static const QRegularExpression re(
        QStringLiteral(R"((?<![\w.])(step|iteration|iter|epoch)['"]?\s*[:=#]?\s*(\d+)(?![\d.]))"),
        QRegularExpression::CaseInsensitiveOption);
    return re;
}

// The line's own x: step beats iter(ation) beats epoch; -1 when there is none.
qint64 lineStep(const QString &line)
{
    qint64 best = -1;
    int bestRank = 99;
    auto it = stepPattern().globalMatch(line);
    while (it.hasNext()) {
        const QRegularExpressionMatch m = it.next();
        const QString word = m.captured(1).toLower();
        const int rank = word == QLatin1String("step")            ? 0
                         : word.startsWith(QLatin1String("iter")) ? 1
                                                                  : 2;
        if (rank < bestRank) {
            bool ok = false;
            const qint64 n = m.captured(2).toLongLong(&ok);
            if (ok) {
                best = n;
                bestRank = rank;
            }
        }
    }
    return best;
}

bool parseNumber(const QString &text, double *value)
{
    const QString t = text.trimmed().toLower();
    if (t.endsWith(QLatin1String("nan"))) {
        *value = std::numeric_limits<double>::quiet_NaN();
        return true;
    }
    if (t.endsWith(QLatin1String("inf"))) {
        *value = t.startsWith(QLatin1Char('-')) ? -std::numeric_limits<double>::infinity()
                                                : std::numeric_limits<double>::infinity();
        return true;
    }
    bool ok = false;
    *value = t.toDouble(&ok);
    return ok;
}

} // namespace

qint64 LogMetricExtractor::stepFor(int rank, const QString &name, qint64 step)
{
    qint64 &count = m_counts[{rank, name}];
    const qint64 x = step >= 0 ? step : count;
    ++count;
    return x;
}

QList<LogMetricExtractor::Point> LogMetricExtractor::extract(int rank, const QString &line)
{
    QList<Point> points;
    const bool defaults = m_defaults;
    if (!defaults && m_user.isEmpty())
        return points;
    // Cheap rejection: most lines of a training log carry no metric at all.
    if (defaults && m_user.isEmpty() && line.size() > 0) {
        bool digit = false;
        for (QChar c : line) {
            if (c.isDigit()) {
                digit = true;
                break;
            }
        }
        if (!digit && !line.contains(QLatin1String("nan"), Qt::CaseInsensitive) &&
            !line.contains(QLatin1String("inf"), Qt::CaseInsensitive))
            return points;
    }
    const qint64 x = lineStep(line);
    if (defaults) {
        auto it = defaultPattern().globalMatch(line);
        while (it.hasNext()) {
            const QRegularExpressionMatch m = it.next();
            double value = 0;
            if (!parseNumber(m.captured(2), &value))
                continue;
            const QString name = m.captured(1).toLower();
            if (!m_reported.contains({rank, name}))
                points.append({name, stepFor(rank, name, x), value});
        }
    }
    for (const MetricPattern &p : std::as_const(m_user)) {
        auto it = p.regex.globalMatch(line);
        while (it.hasNext()) {
            const QRegularExpressionMatch m = it.next();
            double value = 0;
            if (!parseNumber(m.captured(1), &value))
                continue;
            points.append({p.name, stepFor(rank, p.name, x), value});
        }
    }
    return points;
}

} // namespace rankdeck
