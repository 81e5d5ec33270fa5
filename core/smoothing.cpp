// SPDX-License-Identifier: GPL-3.0-or-later
#include "smoothing.h"

#include <cmath>

namespace rankdeck {

namespace {
// A weight of 1 would freeze the average at 0 (TensorBoard then shows a flat line); keep it
// just below.
double clampWeight(double w)
{
    if (!(w > 0.0))
        return 0.0;
    return w < 0.999999 ? w : 0.999999;
}
} // namespace

Smoothing::Smoothing(double weight)
    : m_weight(clampWeight(weight))
{
}

void Smoothing::reset()
{
    m_last = 0.0;
    m_debias = 1.0;
    m_first = 0.0;
    m_constant = true;
    m_count = 0;
}

double Smoothing::next(double y)
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
    // A constant series stays exactly constant (the debiased average equals it up to rounding).
    if (m_constant)
        return y;
    const double debias = 1.0 - m_debias;
    return debias > 0.0 ? m_last / debias : m_last;
}

void Smoothing::smooth(std::span<const double> values, double weight, std::span<double> out)
{
    Smoothing s(weight);
    const size_t n = std::min(values.size(), out.size());
    if (s.m_weight == 0.0) {
        for (size_t i = 0; i < n; ++i)
            out[i] = values[i];
        return;
    }
    for (size_t i = 0; i < n; ++i)
        out[i] = s.next(values[i]);
}

QList<double> Smoothing::smooth(std::span<const double> values, double weight)
{
    QList<double> out(qsizetype(values.size()));
    smooth(values, weight, std::span<double>(out.data(), size_t(out.size())));
    return out;
}

} // namespace rankdeck
