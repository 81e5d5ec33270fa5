// SPDX-License-Identifier: GPL-3.0-or-later
//
// TensorBoard's debiased exponential moving average, computed on full-resolution data (never
// after sampling, which is what TensorBoard users complain about):
//     last = last * w + (1 - w) * y;  n += 1;  smoothed = last / (1 - w^n)
// with `last` starting at 0. NaN and ±Inf pass through unchanged and do not advance n; a
// constant series comes back unchanged (up to rounding: it is returned exactly).
#pragma once

#include <QList>
#include <QtGlobal>

#include <cmath>
#include <span>

namespace rankdeck {

class Smoothing
{
public:
    static constexpr double kDefaultWeight = 0.6;
    // The EMA lags about w / (1 - w) points behind the data: 1.5 points at 0.6, nothing on a
    // curve of thousands of points, but most of a curve of five (a loss logged per epoch, an
    // eval metric: TensorBoard's 0.6 shows 0.28 where the last of six points is 0.05). So a curve
    // of n points is smoothed with at most n / (n + kSparsePoints): its lag stays under
    // 1/kSparsePoints of its length. 0.6 applies from 45 points on, 0.9 from 270, 0.99 from
    // 2,970; below, less (5 points: 0.14).
    static constexpr int kSparsePoints = 30;
    // The weight used for a curve of `points` points when `weight` is asked for.
    static double effectiveWeight(double weight, qint64 points)
    {
        if (!(weight > 0.0) || points <= 0)
            return weight > 0.0 ? weight : 0.0;
        const double cap = double(points) / double(points + kSparsePoints);
        return weight < cap ? weight : cap;
    }

    explicit Smoothing(double weight = kDefaultWeight);

    double weight() const { return m_weight; }
    // Smooths the next value of the series. Inline: it runs once per point of every rank when
    // the weight changes (64M points), where a call per point cost a third of the time.
    double next(double y)
    {
        if (!std::isfinite(y))
            return y;
        if (m_count == 0)
            m_first = y;
        else if (y != m_first)
            m_constant = false;
        m_last = m_last * m_weight + (1.0 - m_weight) * y;
        m_debias *= m_weight;
        ++m_count;
        // A constant series stays exactly constant (the debiased average equals it up to
        // rounding).
        if (m_constant)
            return y;
        const double debias = 1.0 - m_debias;
        return debias > 0.0 ? m_last / debias : m_last;
    }
    void reset()
    {
        m_last = 0.0;
        m_debias = 1.0;
        m_first = 0.0;
        m_constant = true;
        m_count = 0;
    }

    // The whole series at once. Weight <= 0 returns the input; weight is clamped below 1.
    static QList<double> smooth(std::span<const double> values, double weight = kDefaultWeight);
    static void smooth(std::span<const double> values, double weight, std::span<double> out);

private:
    double m_weight;
    double m_last = 0.0;
    double m_debias = 1.0; // w^n
    double m_first = 0.0;
    bool m_constant = true; // every finite value so far equals m_first
    long long m_count = 0;
};

} // namespace rankdeck
