// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Overview's ranks × steps heatmap of step time (or communication wait): one pixel row per
// rank, scaled to the widget, colours from dark (short) to bright (long) on the grid's own
// stable scale (StepHeatmap::updateScale(); cells beyond it take its end colours, and the
// legend says so with "≥"/"≤"). Each cell is the largest value of its steps, and the caption and
// the tooltip say so. In synchronous training every rank's step lasts as long as the slowest
// rank's, so step time shows when steps slow down; communication wait shows who waits: bright
// rows wait for the dark one, the straggler.
//
// With more ranks than the widget has pixel rows, each pixel row shows the rank of its group
// whose cell lies farthest from the column's median (never a plain subsample, which would drop
// a straggler's row with the others).
//
// By keyboard: arrows move a cell cursor (Home/End: first/last column, Page Up/Down: ten rows),
// and the cell's text is its tooltip and its accessible description, which a screen reader reads.
//
// It paints what it is given (core's StepHeatmap, kept by StepHeatmapCache); the page decides
// when to update. The image holds one pixel per cell and is redrawn only from the first column
// that changed, unless the grid's layout, metric or colour scale changed.
#pragma once

#include "models/stepheatmap.h"

#include <QImage>
#include <QWidget>

#include <array>
#include <utility>
#include <vector>

namespace rankdeck {

class StepHeatmapView : public QWidget
{
    Q_OBJECT
public:
    explicit StepHeatmapView(QWidget *parent = nullptr);

    // changedFrom: the first column that differs from the last heatmap given (what
    // StepHeatmapCache::update() returns); 0 redraws everything.
    void setHeatmap(const StepHeatmap &heatmap, const QString &unit, int changedFrom = 0);
    const StepHeatmap &heatmap() const { return m_heatmap; }
    // The colour a cell value gets (the scale's low end dark, its high end bright).
    QColor colorFor(float value) const;
    // Columns for the grid: the plot area's width at two pixels a column at least, rounded down
    // to a power of two so that resizing the window rarely changes it (each change rebuilds the
    // grid from every point).
    int wantedColumns() const;
    // Cells the image was last redrawn from (the benchmark's and the tests' view of the work).
    qint64 lastRedrawnCells() const { return m_redrawnCells; }
    // The row (of heatmap().ranks) and column drawn at a point of the widget; false outside.
    // With more ranks than pixel rows, a pixel row shows the one rank of its group that lies
    // farthest from the column's median (so a straggler is drawn, bright or dark).
    bool cellAt(QPoint pos, int *row, int *column) const;
    // The tooltip text for a point of the widget; empty outside the cells.
    QString cellText(QPoint pos) const;
    // Where the cells are drawn, in widget coordinates.
    QRect plotArea() const;
    QSize sizeHint() const override;
    // The keyboard's cell: pixel row of the image and column; (-1, -1) before any key.
    QPoint cursorCell() const { return m_cursor; }
    // Where the keyboard's cell is drawn, in widget coordinates (its centre is what it reads).
    QRect cursorRect() const;

signals:
    // wantedColumns() changed with the widget's size.
    void wantedColumnsChanged();

protected:
    bool event(QEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void focusInEvent(QFocusEvent *event) override;
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    QRect plotRect() const;
    int imageRows() const;
    void rebuildImage();
    void redraw(int fromColumn);
    float columnMedian(int column, std::vector<float> &scratch) const;
    std::pair<int, int> groupOf(int y) const;
    int farthestInGroup(int y, int column, float median) const;
    QRgb rgbFor(float value) const;
    void moveCursor(int row, int column);

    StepHeatmap m_heatmap;
    QString m_unit;
    QImage m_image; // capacity × rows, the columns in use on the left
    std::array<QRgb, 256> m_lut{};
    qint64 m_redrawnCells = 0;
    int m_lastWanted = 0;
    QPoint m_cursor{-1, -1}; // x: column, y: pixel row of the image
};

} // namespace rankdeck
