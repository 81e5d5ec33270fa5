// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/smoothing.h"

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

Smoothing::Smoothing(double weight) : m_weight(clampWeight(weight)) {}

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
