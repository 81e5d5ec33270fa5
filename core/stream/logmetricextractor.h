// SPDX-License-Identifier: GPL-3.0-or-later
//
// Curves with no code change: scalars found in the ordinary log lines of the user's program.
//   - Default patterns pick up the common ways of printing a metric: `loss=0.31`, `loss: 0.31`,
//     `Loss 0.31`, `'loss': 0.31`, `'loss': '0.31'`, `"loss": 0.31`, `val_loss=…`, `lr=1e-3`,
//     `acc …`, `ppl …` (the name as printed, lower-cased).
//   - User patterns, `NAME=REGEX` with exactly one capture group, add any other metric.
//   - A line that is a flat dict of numbers (Transformers' Trainer prints
//     `{'loss': '0.69', 'grad_norm': '1.2', 'learning_rate': '5e-05', 'epoch': '0.12'}`, JSON
//     loggers print `{"loss": 0.69, "step": 10}`) gives every number in it but its x keys.
//   - A progress bar (tqdm's format, see ProgressBarLine) gives the numbers of its postfix
//     (`train_loss=0.228`; Lightning's `v_num` is its log version, not a metric), once per
//     value: the redraws in between repeat the last one.
// The x of a point, and what it counts (XBasis):
//   - a bar's metrics: the bar's global position, a step: epoch × total + n for a bar whose
//     description says "Epoch N" (Lightning, a tqdm loop per epoch), else n plus the totals of
//     its earlier runs (a bar that starts again at 0 is the next run of the same bar);
//   - a dict line: its `step`/`global_step`, else the rank's progress bar's global position
//     at that line, else its integral `epoch` (an epoch), else its report count. Transformers'
//     training bar counts global steps, and it prints its logs with tqdm.write(), which clears
//     the bar, writes the line (to stdout) and redraws the bar (on stderr) at once: the first
//     top-level redraw after such a clear shows the step of the line exactly, whichever of the
//     two pipes the launcher reads first (the line's points wait for that redraw for
//     kRefreshWaitUs of arrival time at most, or the end of the rank's output; then the bar's
//     latest position is taken). The epoch fraction
//     (`'epoch': '0.1562'`, 4 significant digits) is not used: it is rounded, and the steps
//     per epoch it would need are printed nowhere;
//   - other lines: the `step`, `iter`/`iteration` or `epoch` number in the same line (in that
//     order of preference; an epoch is an epoch), otherwise the count of earlier points of that
//     metric on that rank (a report).
//   The x taken from a bar or a counter never goes back: it is at least one past the series'
//   last (tqdm redraws a changed postfix before it updates n). A printed step may go back (a
//   restart; the store starts a new segment).
// A series keeps the basis of its first point: a later point of another basis goes to the
// series "NAME [epoch]" (or [step], [report]), never onto the same axis unsaid.
// It runs on the launcher over the recorded lines, so patterns can change after a run and the
// record re-extracted (export). Plain data in and out; one extractor per run, fed every rank.
#pragma once

#include "config/metricpattern.h"
#include "stream/progressbarline.h"
#include "stream/rankstream.h"
#include "stream/xbasis.h"

#include <QHash>
#include <QList>
#include <QRegularExpression>
#include <QSet>
#include <QString>

namespace rankdeck {

class LogMetricExtractor
{
public:
    struct Point
    {
        QString name;
        qint64 step = 0;
        double value = 0;
        XBasis basis = XBasis::Step;
        qint64 timeUs = 0; // of the line or redraw it came from (extract(rank, Output))
        bool operator==(const Point &other) const = default;
    };

    void setDefaultPatternsEnabled(bool enabled) { m_defaults = enabled; }
    void setUserPatterns(const QList<MetricPattern> &patterns) { m_user = patterns; }
    bool isActive() const { return m_defaults || !m_user.isEmpty(); }

    // The points one line (or one redraw of a line) of `rank` gives. nested: the text moved the
    // cursor up after drawing (a bar below another one, tqdm's position > 0).
    QList<Point> extract(int rank, const QString &line, bool nested = false);
    // Everything a chunk of the rank's output gives: its complete lines and the redraws that
    // came before them, in the order they came.
    QList<Point> extract(int rank, const RankStream::Output &out);
    // The rank reports `name` in its own step events: the default patterns no longer give it
    // a second curve from the rank's lines (user patterns always apply).
    void reportedInEvents(int rank, const QString &name) { m_reported.insert({rank, name}); }

    // How long a tqdm.write() line's points wait for the bar's redraw (by arrival time).
    static constexpr qint64 kRefreshWaitUs = 250000;

private:
    struct Series
    {
        XBasis basis = XBasis::Step;
        qint64 lastX = 0;
        qint64 reports = 0;
        bool any = false;
    };
    struct Bar
    {
        qint64 lastN = -1;
        qint64 lastTotal = -1;
        qint64 offset = 0; // the totals of the bar's earlier runs
        QHash<QString, double> lastValues;
    };
    struct RankState
    {
        QHash<QString, Bar> bars; // by ProgressBarLine::key and total
        qint64 barStep = -1;      // global position of the rank's top-level bar, -1: none
        bool cleared = false;     // a top-level clear (tqdm.write) not yet taken by a line
        qint64 refreshStep = -1;  // the first top-level bar position after it
        QList<Point> waiting;     // a dict line's points, waiting for that position
        qint64 waitingSinceUs = 0;
    };

    // The bar's global position, its state updated; `nested` bars leave the rank's step alone.
    qint64 position(int rank, const ProgressBarLine &bar, bool nested);
    void fromBar(int rank, const ProgressBarLine &bar, bool nested, QList<Point> &points);
    void release(int rank, qint64 x, QList<Point> &points);
    bool fromDict(int rank, const QString &line, QList<Point> &points);
    void fromPatterns(int rank, const QString &line, QList<Point> &points);
    // Puts a point on its series: the name for its basis, the count for a report, the x that
    // never goes back for a derived step.
    void add(int rank, QString name, qint64 x, double value, XBasis basis, bool derived,
             QList<Point> &points);

    bool m_defaults = true;
    QList<MetricPattern> m_user;
    QSet<QPair<int, QString>> m_reported; // (rank, metric) its events carry
    QHash<QPair<int, QString>, Series> m_series;
    QHash<int, RankState> m_ranks;
};

} // namespace rankdeck
