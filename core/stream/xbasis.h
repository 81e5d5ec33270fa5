// SPDX-License-Identifier: GPL-3.0-or-later
//
// What a metric's x counts. Steps (optimizer or batch steps: a worker's or rankdeck.log's step,
// `step N`/`iter N` in a printed line, a progress bar's global position, a TensorBoard step),
// epochs (`epoch N` in a printed line) and reports (the n-th time a line without any step
// printed the metric) are different axes: a series keeps one, and the plot says which.
#pragma once

#include <QString>
#include <QStringView>

namespace rankdeck {

enum class XBasis : quint8
{
    Step = 0,
    Epoch = 1,
    Report = 2,
};

// "step", "epoch", "report": how the record writes it (metrics-x.csv) and how a series of
// another basis is told apart by name ("val_loss [epoch]").
QString xBasisKey(XBasis basis);
bool parseXBasis(QStringView key, XBasis *basis);
// The axis title: "Step", "Epoch", "Report # (no step in the line)".
QString xBasisLabel(XBasis basis);

} // namespace rankdeck
