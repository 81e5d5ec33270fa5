// SPDX-License-Identifier: GPL-3.0-or-later
//
// The loss curves of one run: one line per rank plus the mean, debiased EMA smoothing with the
// raw curve drawn faintly behind, x by step / relative time / wall time, log-scale y, outlier-
// robust auto-range, ranks toggled and filtered from the legend, hover values (ranks furthest
// from the mean first), zoom/pan, PNG/PDF/CSV export and TensorBoard event files. Colours follow
// the widget's palette, also when it changes while running (a light/dark switch). Or several runs
// overlaid (setComparedRuns(): ComparedRunCurves per run, each in a colour of its own from
// RunColors). It never replots per event: the owning page calls poll() on its timer, which
// refetches only when the provider's generation or the view changed, and replots queued.
#pragma once

#include "comparedruncurves.h"
#include "plotdataprovider.h"
#include "rankfilter.h"
#include "runcolors.h"

#include <QElapsedTimer>
#include <QHash>
#include <QSet>
#include <QWidget>

#include <memory>
#include <vector>

class QCheckBox;
class QComboBox;
class QCPGraph;
class QCPItemStraightLine;
class QCPItemText;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QListWidget;
class QListWidgetItem;
class QSlider;
class QToolButton;

namespace rankdeck {

class LossPlot : public QWidget
{
    Q_OBJECT
public:
    explicit LossPlot(QWidget *parent = nullptr);
    ~LossPlot() override;

    // Not owned; may be null (an empty plot).
    void setProvider(const PlotDataProvider *provider);

    // Several runs in one plot: each run's mean across its ranks (its one rank's curve when it
    // has one) with a min–max band across ranks or a line per rank (compareRanks()), one stable
    // colour per run, the same smoothing and x mode for all, the legend by run name. Providers
    // are not owned. An empty list goes back to the single run of setProvider().
    struct ComparedRun
    {
        QString name;
        const PlotDataProvider *provider = nullptr;
        // What names the run for good (its id or record directory; empty: the name): a run
        // keeps its colour for as long as this plot lives, whatever else is compared with it.
        QString key;
    };
    void setComparedRuns(const QList<ComparedRun> &runs);
    bool isComparing() const { return !m_compared.isEmpty(); }
    // The colour of the i-th compared run (also what the picture's legend shows).
    QColor runColor(int index) const;
    // The i-th compared run's graphs (tests, benchmarks), null when out of range.
    const ComparedRunCurves *comparedRun(int index) const;
    CompareRanks compareRanks() const { return m_compareRanks; }
    void setCompareRanks(CompareRanks ranks);

    // Renders the plot alone (no controls), width × height pixels, with a legend of the curves
    // drawn, into a PNG or a PDF: the picture rankdeck-cli plot writes without a display.
    bool renderToFile(const QString &fileName, int width, int height, bool pdf);

    double smoothing() const;
    void setSmoothing(double weight);
    PlotXMode xMode() const { return m_xMode; }
    void setXMode(PlotXMode mode);
    bool logScale() const { return m_logScale; }
    void setLogScale(bool on);
    bool ignoreOutliers() const { return m_ignoreOutliers; }
    void setIgnoreOutliers(bool on);
    // Drawn: ticked in the legend and matching its filter.
    bool isRankVisible(int rank) const;
    // Ticks or unticks a rank in the legend (the filter stays as it is).
    void setRankVisible(int rank, bool visible);
    // The legend's filter ("3", "0-7", "3,5", or part of a name; see RankFilter): ranks that do
    // not match leave the legend and the plot.
    QString rankFilter() const;
    void setRankFilter(const QString &text);
    // "Only this rank" of the legend: the filter set to its number (the mean stays). When
    // comparing, "only this run": every other run unticked.
    void showOnlyRank(int rank);
    // The way back: the filter cleared and every rank ticked.
    void showAllRanks();
    // The hover read-out at data x: a header, the mean, then the ranks furthest from the mean
    // first, capped, with how many more there are. Empty when nothing is drawn there.
    QString hoverText(double x, double *shownKey = nullptr) const;

    // Points currently held for a rank's raw curve (PlotDataProvider::MeanCurve for the mean;
    // when comparing, the compared run's index);
    // with more than 16 curves shown and smoothing on, raw curves are not drawn (0 points).
    int pointCount(int rank) const;
    QList<int> plottedRanks() const { return m_rankOrder; }
    // What the plot says of a long run's folded history where the view shows it (the note at
    // its border, also the plot's accessible description); empty when it shows every point.
    QString historyNote() const { return m_historyNote; }
    QCustomPlot *customPlot() const { return m_plot; }

    bool exportPng(const QString &fileName);
    bool exportPdf(const QString &fileName);
    bool exportCsv(const QString &fileName, QString *errorMessage = nullptr);
    // rank-N/events.out.tfevents.* under `directory`, every metric at full resolution.
    bool exportTensorBoard(const QString &directory, QString *errorMessage = nullptr);

    // Time spent in the last replot, for benchmarks (QCustomPlot measures it).
    double lastReplotMs() const;

public slots:
    // Called by the page's timer: refetch if something changed, then queue one replot.
    void poll();
    // Forces a refetch and a synchronous replot (tests, benchmarks, screenshots).
    void refreshNow();
    void resetView();
    void exportInteractive();
    void exportTensorBoardInteractive();

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    // The buffered layer of the hover marks, so that moving the mouse repaints only them.
    static constexpr const char *HoverLayer = "hover";

    struct Curves
    {
        QCPGraph *raw = nullptr;
        QCPGraph *smooth = nullptr;
    };

    void rebuild();
    void rebuildCompared();
    void createRunCurves();
    void applyTheme();
    void recolorCurves();
    bool passesFilter(int key) const;
    void applyFilterToLegend();
    void showLegendMenu(const QPoint &pos);
    QList<const QCPGraph *> rangeGraphs() const;
    Curves &curvesFor(int rank);
    void ensureLegendItem(int rank);
    void applyAxisMode();
    void autoRange();
    void updateHover(const QPoint &pos);
    void hideHover();
    void updateHistoryMark();
    QColor colorFor(int rank) const;
    QString curveName(int rank) const;
    QString stepAxisTitle() const;
    void markDirty();

    const PlotDataProvider *m_provider = nullptr;
    QList<ComparedRun> m_compared;
    std::vector<std::unique_ptr<ComparedRunCurves>> m_runCurves;
    RunColors m_runColors;
    QList<int> m_runSlots; // each compared run's RunColors slot
    CompareRanks m_compareRanks = CompareRanks::Band;
    QComboBox *m_ranksCombo = nullptr;
    QLabel *m_ranksLabel = nullptr;
    QCustomPlot *m_plot = nullptr;
    QSlider *m_smoothingSlider = nullptr;
    QLabel *m_smoothingLabel = nullptr;
    QComboBox *m_xModeCombo = nullptr;
    QCheckBox *m_logCheck = nullptr;
    QCheckBox *m_outlierCheck = nullptr;
    QToolButton *m_exportButton = nullptr;
    QListWidget *m_legend = nullptr;
    QLineEdit *m_filterEdit = nullptr;
    QToolButton *m_showAllButton = nullptr;
    QCPItemStraightLine *m_hoverLine = nullptr;
    QCPItemStraightLine *m_historyLine = nullptr;
    QCPItemText *m_historyText = nullptr;
    QString m_historyNote;

    QHash<int, Curves> m_curves;
    QHash<int, QListWidgetItem *> m_legendItems;
    QList<int> m_rankOrder;
    QSet<int> m_hiddenRanks;
    RankFilter m_filter;
    // Curves are drawn for a dark background (RunColors' variants); what the palette said last.
    bool m_darkTheme = false;
    PlotXMode m_xMode = PlotXMode::Step;
    bool m_logScale = false;
    bool m_ignoreOutliers = false;
    bool m_autoRange = true;
    bool m_dirty = true;
    bool m_rebuilding = false;
    quint64 m_generation = ~quint64(0);
    // When new data last redrew the plot and what that cost (rebuild and replot), to space out
    // redraws that cost much (poll()).
    QElapsedTimer m_sinceRefresh;
    double m_refreshCostMs = 0;
};

} // namespace rankdeck
