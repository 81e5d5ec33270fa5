// SPDX-License-Identifier: GPL-3.0-or-later
//
// Curves with no code change: scalars found in the ordinary log lines of the user's program.
//   - Default patterns pick up the common ways of printing a metric: `loss=0.31`, `loss: 0.31`,
//     `Loss 0.31`, `'loss': 0.31`, `"loss": 0.31`, `val_loss=…`, `lr=1e-3`, `acc …`, `ppl …`
//     (the name as printed, lower-cased).
//   - User patterns, `NAME=REGEX` with exactly one capture group, add any other metric.
//   - The x value is the `step`, `iter`/`iteration` or `epoch` number in the same line (in that
//     order of preference), otherwise the count of earlier points of that metric on that rank.
// It runs on the launcher over the recorded lines, so patterns can change after a run and the
// record re-extracted (export). Plain data in and out; one extractor per run, fed every rank.
#pragma once

#include "config/metricpattern.h"

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
        bool operator==(const Point &other) const = default;
    };

    void setDefaultPatternsEnabled(bool enabled) { m_defaults = enabled; }
    void setUserPatterns(const QList<MetricPattern> &patterns) { m_user = patterns; }
    bool isActive() const { return m_defaults || !m_user.isEmpty(); }

    // The points one line of `rank` gives; ranks are counted apart for the x fallback.
    QList<Point> extract(int rank, const QString &line);
    // The rank reports `name` in its own step events: the default patterns no longer give it
    // a second curve from the rank's lines (user patterns always apply).
    void reportedInEvents(int rank, const QString &name) { m_reported.insert({rank, name}); }

private:
    qint64 stepFor(int rank, const QString &name, qint64 lineStep);

    bool m_defaults = true;
    QList<MetricPattern> m_user;
    QSet<QPair<int, QString>> m_reported;        // (rank, metric) its events carry
    QHash<QPair<int, QString>, qint64> m_counts; // (rank, name) → points so far
};

} // namespace rankdeck
