// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Overview's picture of a run without step times (a user's program): the step each rank
// reached over time (x: time since the run's first point, y: step), so that a rank that falls
// behind shows as the line below the others. Up to kLinesUpTo ranks each get a thin muted line;
// more are drawn as their band (the lowest to the highest step of each pixel column), since 512
// lines would be one smear. Over either, the ranks' median, the fastest rank and, in the warning
// colour, the slowest rank. The text names the slowest rank ("rank 3 is 40 steps behind the
// median …") and so do the accessible description and the tooltip.
//
// It keeps its RankStepTracks (one value per rank and pixel column) and reads the store's new
// points itself when the page asks (refresh()), so a live refresh reads the few points appended
// since the last one and paints O(ranks × columns) at most; colours come from the palette at
// paint time, so a light/dark switch recolours it.
#pragma once

#include "rankstepstracks.h"

#include <QWidget>

namespace rankdeck {

class MetricsStore;

class RankStepsView : public QWidget
{
    Q_OBJECT
public:
    // Ranks drawn each as a line; beyond, the ranks are drawn as their band.
    static constexpr int kLinesUpTo = 32;

    explicit RankStepsView(QWidget *parent = nullptr);

    // Reads what is new in the store (at most `budget` points) and repaints if anything changed.
    // Returns true while more remains to be read: call again soon (a long record's first read).
    bool refresh(const MetricsStore &store, qint64 budget = RankStepTracks::kDefaultBudget);
    void clear();
    const RankStepTracks &tracks() const { return m_tracks; }
    bool isEmpty() const { return m_tracks.isEmpty(); }

    // One sentence on where the ranks are: the slowest named when it is behind; empty without
    // steps.
    QString summaryText() const { return m_summary; }
    // The slowest rank while it is behind the others (RankStepTracks::slowestBehind()), else -1.
    int namedRank() const;
    // Columns for the tracks: one a pixel of the plot at most, rounded down to a power of two so
    // that resizing the window rarely changes it (each change reads every point again).
    int wantedColumns() const;
    // Where the lines are drawn, in widget coordinates.
    QRect plotArea() const { return plotRect(); }
    // What the tooltip says at a point of the widget; empty outside the plot.
    QString textAt(QPoint pos) const;
    QSize sizeHint() const override;

signals:
    // wantedColumns() changed with the widget's size.
    void wantedColumnsChanged();

protected:
    bool event(QEvent *event) override;
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    // The colours are the palette's: a light/dark switch repaints with the new ones.
    void changeEvent(QEvent *event) override;

private:
    QRect plotRect() const;
    int columnAt(int x) const;
    void updateTexts();
    void paintLegend(QPainter &p, const QRect &area);

    RankStepTracks m_tracks;
    QString m_summary;
    int m_lastWanted = 0;
};

} // namespace rankdeck
