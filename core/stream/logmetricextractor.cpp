// SPDX-License-Identifier: GPL-3.0-or-later
#include "stream/logmetricextractor.h"

#include <cmath>
#include <limits>
#include <utility>

namespace rankdeck {

namespace {

constexpr qsizetype kMaxDictLine = 8192;

// A number as Python, C++ and most loggers print it, nan and inf included.
const QString &numberPattern()
{
    static const QString pattern =
        QStringLiteral(R"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)\b)");
    return pattern;
}

const QRegularExpression &defaultPattern()
{
    // name: optional prefixes joined by '_' (val_, train_, top1_…), then a known metric word;
    // optionally quoted (dict reprs, JSON); then ':' or '=' or plain spaces; then the number,
    // which may be quoted too (Transformers prints its logs' numbers as strings).
    static const QRegularExpression re(
        QStringLiteral(
            R"((?<![\w.])['"]?((?:[a-z0-9]+_)*(?:loss|acc|accuracy|lr|ppl|perplexity))['"]?)"
            R"(\s*(?:[:=]\s*|\s+)['"]?()") +
            numberPattern() + QStringLiteral(R"()(?![\w.]))"),
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

// One entry of a dict or JSON object: a quoted key, then a value up to the next ',' or '}'.
const QRegularExpression &dictEntryPattern()
{
    static const QRegularExpression re(QStringLiteral(
        R"re((['"])([^'"\\]{1,128})\1\s*:\s*('[^'\\]{0,64}'|"[^"\\]{0,64}"|[^,{}\[\]'"]{1,64}))re"));
    return re;
}

// The line's own x: step beats iter(ation) beats epoch; -1 when there is none.
qint64 lineStep(const QString &line, XBasis *basis)
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
    *basis = bestRank == 2 ? XBasis::Epoch : XBasis::Step;
    return best;
}

bool parseNumber(QString text, double *value)
{
    text = text.trimmed();
    if (text.size() >= 2 && (text.front() == u'\'' || text.front() == u'"') &&
        text.back() == text.front())
        text = text.mid(1, text.size() - 2).trimmed();
    const QString t = text.toLower();
    if (t == u"nan" || t == u"+nan" || t == u"-nan") {
        *value = std::numeric_limits<double>::quiet_NaN();
        return true;
    }
    if (t == u"inf" || t == u"+inf" || t == u"-inf") {
        *value = t.startsWith(QLatin1Char('-')) ? -std::numeric_limits<double>::infinity()
                                                : std::numeric_limits<double>::infinity();
        return true;
    }
    bool ok = false;
    *value = t.toDouble(&ok);
    return ok;
}

bool sameValue(double a, double b)
{
    return a == b || (std::isnan(a) && std::isnan(b));
}

bool hasDigitOrSpecial(const QString &line)
{
    for (QChar c : line) {
        if (c.isDigit())
            return true;
    }
    return line.contains(QLatin1String("nan"), Qt::CaseInsensitive) ||
           line.contains(QLatin1String("inf"), Qt::CaseInsensitive);
}

} // namespace

void LogMetricExtractor::add(int rank, QString name, qint64 x, double value, XBasis basis,
                             bool derived, QList<Point> &points)
{
    Series *s = &m_series[{rank, name}];
    if (s->any && s->basis != basis) {
        // Another axis: a series of its own, named for it.
        name += QStringLiteral(" [") + xBasisKey(basis) + u']';
        s = &m_series[{rank, name}];
    }
    if (basis == XBasis::Report)
        x = s->reports++;
    else if (derived && s->any && x <= s->lastX)
        x = s->lastX + 1;
    s->basis = basis;
    s->any = true;
    s->lastX = x;
    points.append(Point{name, x, value, basis, 0});
}

qint64 LogMetricExtractor::position(int rank, const ProgressBarLine &bar, bool nested,
                                    QList<Point> &points)
{
    RankState &rs = m_ranks[rank];
    // Bars without a description are told apart by their totals (Transformers' training bar
    // and its evaluation bar below it).
    const QString key = bar.key + u'\x1f' + QString::number(bar.total);
    Bar &b = rs.bars[key];
    qint64 global = 0;
    if (bar.epoch >= 0 && bar.total > 0) {
        global = qint64(bar.epoch) * bar.total + bar.n;
    } else {
        if (b.lastN >= 0 && bar.n < b.lastN)
            b.offset += qMax(b.lastTotal, b.lastN); // the bar started again: its next run
        global = b.offset + bar.n;
    }
    b.lastN = bar.n;
    b.lastTotal = bar.total;
    if (!nested) {
        if (global >= rs.barStep) {
            rs.barStep = global;
            rs.mainBar = key;
        }
        // The redraw after a clear: where the bar was when that write's line was printed (the
        // training bar's; tqdm redraws the others too).
        if (key != rs.mainBar)
            return global;
        bool drawn = false;
        for (auto &clear : rs.clears) {
            if (clear.second < 0) {
                clear.second = global;
                drawn = true;
            }
        }
        if (drawn)
            pair(rank, points, false, false);
    }
    return global;
}

void LogMetricExtractor::pair(int rank, QList<Point> &points, bool expire, bool all)
{
    RankState &rs = m_ranks[rank];
    while (!rs.waiting.empty() && !rs.clears.empty() && rs.clears.front().second >= 0) {
        release(rank, std::move(rs.waiting.front()), rs.clears.front().second, points);
        rs.waiting.pop_front();
        rs.clears.pop_front();
    }
    if (!expire)
        return;
    // A clear no line came for (a tqdm.write of another line), a line no clear came for.
    while (!rs.clears.empty() && m_nowUs - rs.clears.front().first >= kRefreshWaitUs)
        rs.clears.pop_front();
    while (!rs.waiting.empty() && (all || m_nowUs - rs.waiting.front().sinceUs >= kRefreshWaitUs)) {
        RankState::Waiting w = std::move(rs.waiting.front());
        rs.waiting.pop_front();
        const qint64 fallback = w.fallback;
        release(rank, std::move(w), fallback, points);
    }
}

void LogMetricExtractor::release(int rank, RankState::Waiting waiting, qint64 x,
                                 QList<Point> &points)
{
    for (const Point &w : std::as_const(waiting.points)) {
        const qsizetype at = points.size();
        add(rank, w.name, x, w.value, XBasis::Step, true, points);
        points[at].timeUs = w.timeUs;
    }
}

void LogMetricExtractor::fromBar(int rank, const ProgressBarLine &bar, bool nested,
                                 QList<Point> &points)
{
    const qint64 global = position(rank, bar, nested, points);
    RankState &rs = m_ranks[rank];
    Bar &b = rs.bars[bar.key + u'\x1f' + QString::number(bar.total)];
    // A bar below another one (validation under training) counts its own batches: its
    // metrics belong at the training step they were computed at.
    const qint64 x = nested && rs.barStep >= 0 ? rs.barStep : global;

    QList<QPair<QString, double>> values;
    if (m_defaults) {
        for (const auto &kv : bar.postfixValues()) {
            if (kv.first != u"v_num" && !m_reported.contains({rank, kv.first}))
                values.append(kv);
        }
    }
    for (const MetricPattern &p : std::as_const(m_user)) {
        auto it = p.regex.globalMatch(bar.postfix);
        while (it.hasNext()) {
            double value = 0;
            if (parseNumber(it.next().captured(1), &value))
                values.append({p.name, value});
        }
    }
    for (const auto &[name, value] : std::as_const(values)) {
        // Every redraw repeats the postfix: a value is new when it changed.
        const auto last = b.lastValues.constFind(name);
        if (last != b.lastValues.cend() && sameValue(*last, value))
            continue;
        b.lastValues.insert(name, value);
        add(rank, name, x, value, XBasis::Step, true, points);
    }
}

bool LogMetricExtractor::fromDict(int rank, const QString &line, QList<Point> &points)
{
    const QString t = line.trimmed();
    if (t.size() < 2 || t.size() > kMaxDictLine || t.front() != u'{' || t.back() != u'}')
        return false;
    QList<QPair<QString, double>> values;
    qint64 step = -1;
    double epoch = -1;
    auto it = dictEntryPattern().globalMatch(t);
    while (it.hasNext()) {
        const QRegularExpressionMatch m = it.next();
        double v = 0;
        if (!parseNumber(m.captured(3), &v))
            continue;
        const QString key = m.captured(2).trimmed().toLower();
        if (key == u"step" || key == u"global_step" || key == u"iter" || key == u"iteration") {
            if (std::isfinite(v) && v >= 0 && v < 9e15)
                step = qint64(v);
            continue;
        }
        if (key == u"epoch") {
            epoch = v;
            continue;
        }
        values.append({key, v});
    }
    if (values.isEmpty())
        return false;
    XBasis basis = XBasis::Step;
    qint64 x = step;
    bool derived = false;
    RankState &rs = m_ranks[rank];
    if (x < 0 && rs.barStep >= 0 && m_nowUs > 0) {
        // Beside a bar: the redraw after its clear will say where (see the header).
        RankState::Waiting w{m_nowUs, rs.barStep, {}};
        for (const auto &[name, value] : std::as_const(values)) {
            if (!m_reported.contains({rank, name}))
                w.points.append(Point{name, 0, value, XBasis::Step, m_nowUs});
        }
        rs.waiting.push_back(std::move(w));
        pair(rank, points, false, false);
        return true;
    } else if (x < 0 && rs.barStep >= 0) {
        x = rs.barStep; // printed beside the bar: its latest position
        derived = true;
    } else if (x < 0 && epoch >= 0 && epoch < 9e15 && epoch == std::floor(epoch)) {
        x = qint64(epoch);
        basis = XBasis::Epoch;
    } else if (x < 0) {
        basis = XBasis::Report;
    }
    for (const auto &[name, value] : std::as_const(values)) {
        if (!m_reported.contains({rank, name}))
            add(rank, name, x, value, basis, derived, points);
    }
    return true;
}

void LogMetricExtractor::fromPatterns(int rank, const QString &line, QList<Point> &points)
{
    XBasis basis = XBasis::Step;
    qint64 x = lineStep(line, &basis);
    if (x < 0)
        basis = XBasis::Report;
    if (m_defaults) {
        auto it = defaultPattern().globalMatch(line);
        while (it.hasNext()) {
            const QRegularExpressionMatch m = it.next();
            double value = 0;
            if (!parseNumber(m.captured(2), &value))
                continue;
            const QString name = m.captured(1).toLower();
            if (!m_reported.contains({rank, name}))
                add(rank, name, x, value, basis, false, points);
        }
    }
}

QList<LogMetricExtractor::Point> LogMetricExtractor::extract(int rank, const QString &line,
                                                             bool nested)
{
    QList<Point> points;
    if (!isActive() || line.isEmpty())
        return points;
    // Cheap rejection: most lines of a training log carry no metric at all.
    if (m_user.isEmpty() && !hasDigitOrSpecial(line))
        return points;
    if (const std::optional<ProgressBarLine> bar = ProgressBarLine::parse(line)) {
        fromBar(rank, *bar, nested, points);
        return points;
    }
    // A print() that ended the bar's row: the bar's last state, then the printed text as a line
    // of its own. Read as one line, the bar's postfix took the text's "step N" as its x, one
    // step behind the bar's next redraw: every value twice, and x went back.
    qsizetype textFrom = 0;
    if (const std::optional<ProgressBarLine> bar = ProgressBarLine::parseLeading(line, &textFrom)) {
        fromBar(rank, *bar, nested, points);
        points += extract(rank, line.mid(textFrom), nested);
        return points;
    }
    const bool dict = m_defaults && fromDict(rank, line, points);
    if (!dict)
        fromPatterns(rank, line, points);
    if (!m_user.isEmpty()) {
        XBasis basis = XBasis::Step;
        qint64 x = lineStep(line, &basis);
        if (x < 0)
            basis = XBasis::Report;
        for (const MetricPattern &p : std::as_const(m_user)) {
            auto it = p.regex.globalMatch(line);
            while (it.hasNext()) {
                double value = 0;
                if (parseNumber(it.next().captured(1), &value))
                    add(rank, p.name, x, value, basis, false, points);
            }
        }
    }
    return points;
}

QList<LogMetricExtractor::Point> LogMetricExtractor::extract(int rank,
                                                             const RankStream::Output &out)
{
    QList<Point> points;
    if (!isActive())
        return points;
    auto stamp = [&points](qsizetype from, qint64 timeUs) {
        for (qsizetype i = from; i < points.size(); ++i) {
            if (points[i].timeUs == 0)
                points[i].timeUs = timeUs;
        }
    };
    qsizetype r = 0;
    auto redrawsBefore = [&](qsizetype line) {
        for (; r < out.redraws.size() && out.redraws[r].beforeLine <= line; ++r) {
            const RankStream::Redraw &d = out.redraws[r];
            m_nowUs = d.timeUs;
            if (d.clear) {
                // tqdm.write clears every bar, then writes, then redraws them: clears with no
                // redraw of the training bar between them are one write's.
                RankState &rs = m_ranks[rank];
                if (rs.clears.empty() || rs.clears.back().second >= 0)
                    rs.clears.emplace_back(d.timeUs, -1);
                continue;
            }
            const qsizetype from = points.size();
            points += extract(rank, d.text, d.nested);
            stamp(from, d.timeUs);
        }
    };
    for (qsizetype i = 0; i < out.lines.size(); ++i) {
        redrawsBefore(i);
        const LogLine &line = out.lines[i];
        if (line.partial || line.text.isEmpty())
            continue;
        m_nowUs = line.timeUs;
        const qsizetype from = points.size();
        points += extract(rank, line.text, line.overdrawn);
        stamp(from, line.timeUs);
    }
    redrawsBefore(out.lines.size());
    // What the rows show now: where the bars are (their metrics come with the redraw that
    // replaces it, so that each state is read once).
    for (const RankStream::Live &live : out.live) {
        if (const std::optional<ProgressBarLine> bar = ProgressBarLine::parse(live.text)) {
            m_nowUs = live.timeUs;
            const qsizetype from = points.size();
            position(rank, *bar, live.nested, points);
            stamp(from, live.timeUs);
        }
    }
    // Points of a dict line whose clear and redraw did not come in time, or whose rank's output
    // ended, take the bar's position when the line came.
    m_nowUs = out.timeUs;
    if (m_ranks.contains(rank))
        pair(rank, points, true, out.finished);
    m_nowUs = 0;
    return points;
}

} // namespace rankdeck
