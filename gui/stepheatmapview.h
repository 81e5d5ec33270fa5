// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Overview's ranks × steps heatmap of step time (or communication wait): one pixel row per
// rank, scaled to the widget, colours from dark (short) to bright (long) on the grid's own
// scale. In synchronous training every rank's step lasts as long as the slowest rank's, so step
// time shows when steps slow down; communication wait shows who waits: bright rows wait for
// the dark one, the straggler. It paints what it is given (core's StepHeatmap); the page
// decides when to recompute.
#pragma once

#include "models/stepheatmap.h"

#include <QImage>
#include <QWidget>

namespace rankdeck {

class StepHeatmapView : public QWidget
{
    Q_OBJECT
public:
    explicit StepHeatmapView(QWidget *parent = nullptr);

    void setHeatmap(StepHeatmap heatmap, const QString &unit);
    const StepHeatmap &heatmap() const { return m_heatmap; }
    // The colour a cell value gets (the scale's low end dark, its high end bright).
    QColor colorFor(float value) const;
    // Columns the plot area has room for (one cell per two pixels at most).
    int wantedColumns() const;
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    QRect plotRect() const;

    StepHeatmap m_heatmap;
    QString m_unit;
    QImage m_image;
};

} // namespace rankdeck
