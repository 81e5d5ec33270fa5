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
//     the bar (on stderr), writes the line (on stdout) and redraws the bar: the first
//     top-level redraw after such a clear shows the step of the line exactly. The two pipes
//     arrive in either order, so clears (with their redraws) and dict lines are paired first
//     come, first served, within kRefreshWaitUs of each other; a line's points wait that long
//     for their clear at most (or until the rank's output ends), then take the bar's position
//     when the line came (a line printed beside a bar with print(): no clear). A tqdm.write()
//     of another line within that time could take a dict line's clear: its step is then
//     another write's, still in order. The epoch fraction
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

#include <deque>

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
        QString mainBar;          // the bar that is furthest: its redraws follow the clears
        // Top-level clears (tqdm.write) no line took yet: when, and the bar's first position
        // after each (-1: not drawn yet).
        std::deque<std::pair<qint64, qint64>> clears;
        // Dict lines waiting for a clear: when they came, the bar's position then, their points.
        struct Waiting
        {
            qint64 sinceUs = 0;
            qint64 fallback = 0;
            QList<Point> points;
        };
        std::deque<Waiting> waiting;
    };

    // The bar's global position, its state updated; `nested` bars leave the rank's step alone.
    // A top-level redraw right after a clear takes a waiting line's points to its position.
    qint64 position(int rank, const ProgressBarLine &bar, bool nested, QList<Point> &points);
    void fromBar(int rank, const ProgressBarLine &bar, bool nested, QList<Point> &points);
    // Pairs waiting lines with drawn clears, in order; with expire, what waited too long.
    void pair(int rank, QList<Point> &points, bool expire, bool all);
    void release(int rank, RankState::Waiting waiting, qint64 x, QList<Point> &points);
    bool fromDict(int rank, const QString &line, QList<Point> &points);
    void fromPatterns(int rank, const QString &line, QList<Point> &points);
    // Puts a point on its series: the name for its basis, the count for a report, the x that
    // never goes back for a derived step.
    void add(int rank, QString name, qint64 x, double value, XBasis basis, bool derived,
             QList<Point> &points);

    // Arrival time of what is being read (extract(rank, Output)); 0: a line on its own, whose
    // points never wait.
    qint64 m_nowUs = 0;
    bool m_defaults = true;
    QList<MetricPattern> m_user;
    QSet<QPair<int, QString>> m_reported; // (rank, metric) its events carry
    QHash<QPair<int, QString>, Series> m_series;
    QHash<int, RankState> m_ranks;
};

} // namespace rankdeck
