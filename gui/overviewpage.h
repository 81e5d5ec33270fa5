// SPDX-License-Identifier: GPL-3.0-or-later
//
// The "Overview" tab: one row per rank (a table view over core's RankTableModel, so 512 ranks
// are 512 model rows, not widgets), overall progress with ETA, per-node launch progress, the
// root-cause banner of a failed run, Stop / Kill / Dump stacks, and the step times: who is slow
// in words (core's StragglerReport) over a ranks × steps heatmap of step time or communication
// wait. A run without step times (a user's program) shows the step each rank reached over time
// in the heatmap's place (RankStepsView). It shows what it is given; RunView feeds it from the
// run controller and its stores.
#pragma once

#include "models/rankdifferencemodel.h"
#include "record/shownstate.h"

#include <QList>
#include <QWidget>

class QAbstractItemModel;
class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QPlainTextEdit;
class QTableView;
class QTableWidget;

namespace rankdeck {

class RankStepsView;
class SteadyLabel;
class StepHeatmapView;

class OverviewPage : public QWidget
{
    Q_OBJECT
public:
    // What stands under the straggler line: the heatmap (a run with step times), the step each
    // rank reached (a run without: a user's program), or, with neither, the heatmap's one
    // "no steps" message without the metric choice that has nothing to choose from.
    enum class StepsShown
    {
        Nothing,
        Heatmap,
        RankSteps
    };

    explicit OverviewPage(QWidget *parent = nullptr);

    void setRankModel(QAbstractItemModel *model);
    QTableView *rankTable() const { return m_table; }
    // Ranks that are alike as ranges above the table ("ranks 0–16, 18–511 running; rank 17
    // failed (exit 1)"), and the ranks that differ from the majority in a table of their own
    // (issue 31: at 512 ranks the table is a scroll, these are what to look at). Empty hides them.
    void setRankSummary(const QString &text);
    QString rankSummary() const;
    void setRankDifferences(const QList<RankDifference> &differences);
    QTableView *rankDifferencesTable() const { return m_differences; }

    // stateText leads with the state's word; the state gives its colour and icon.
    void setTitle(const QString &title, const QString &stateText, ShownState state);
    // The slowest rank's step / the total ("step 212 / 300"); eta in seconds (< 0: unknown).
    // withoutTotal: what the bar says when no rank reported a total (a user's program).
    // slowestRank: named after the steps while the ranks differ ("…, slowest rank 3"); -1: not.
    void setProgress(qint64 done, qint64 total, double etaSeconds,
                     const QString &withoutTotal = QString(), int slowestRank = -1);
    QString progressText() const;
    // Empty text hides the banner.
    void setRootCause(const QString &text);
    QString rootCauseText() const;
    bool isBannerVisible() const;
    // Launch progress of one node; percent < 0: no percentage for this stage.
    void setNodeProgress(int nodeIndex, const QString &node, const QString &stage, int percent);
    void clearNodeProgress();
    // One line per node: its clock offset ("node 1 (gpu2): −5.002 s ±0.3 ms"); empty hides it.
    void setNodeClocks(const QStringList &lines);
    QString nodeClocksText() const;
    // Rows: nodes; columns: node, stage, progress (percent in Qt::UserRole + 1, -1 without one).
    QTableWidget *nodeProgressTable() const { return m_nodes; }
    // Stop, Kill and Dump stacks can act: the run goes on and something takes its requests.
    void setRunActive(bool active);
    bool isRunActive() const;
    // A run followed from its record whose ranks go on without a launcher (detached, or their
    // launcher died): the Re-attach button takes it over. Hidden otherwise.
    void setReattachable(bool reattachable);
    // The batch script a Slurm run submitted; empty hides it.
    void setBatchScript(const QString &text);
    QPlainTextEdit *batchScriptView() const { return m_script; }

    // Empty text hides the line; a named rank (>= 0) makes it an amber banner, not a note.
    void setStragglerText(const QString &text, int rank);
    QString stragglerText() const;
    StepHeatmapView *heatmapView() const { return m_heatmap; }
    QComboBox *heatmapMetricCombo() const { return m_heatmapMetric; }
    // The metric the heatmap shows: step_ms or comm_wait_ms.
    QString heatmapMetric() const;
    RankStepsView *rankStepsView() const { return m_rankSteps; }
    void setStepsShown(StepsShown shown);
    StepsShown stepsShown() const { return m_stepsShown; }

    QPushButton *stopButton() const { return m_stop; }
    QPushButton *killButton() const { return m_kill; }
    QPushButton *dumpStacksButton() const { return m_dump; }
    QPushButton *reattachButton() const { return m_reattach; }

signals:
    void stopRequested();
    void killRequested();
    void dumpStacksRequested();
    void runActiveChanged(bool active);
    void reattachRequested();
    void rootCauseActivated();
    void heatmapMetricChanged();

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;
    // A light/dark switch while running recolours the state and the banners.
    void changeEvent(QEvent *event) override;

private:
    void applyColours();

    QLabel *m_title = nullptr;
    QLabel *m_state = nullptr;
    QLabel *m_stateIcon = nullptr;
    ShownState m_shownState = ShownState::Unknown;
    bool m_stragglerNamed = false;
    QProgressBar *m_progress = nullptr;
    SteadyLabel *m_eta = nullptr;
    QLabel *m_clocks = nullptr;
    QLabel *m_banner = nullptr;
    QTableWidget *m_nodes = nullptr;
    QTableView *m_table = nullptr;
    QLabel *m_rankSummary = nullptr;
    QTableView *m_differences = nullptr;
    RankDifferenceModel *m_differenceModel = nullptr;
    QPlainTextEdit *m_script = nullptr;
    QPushButton *m_stop = nullptr;
    QPushButton *m_kill = nullptr;
    QPushButton *m_dump = nullptr;
    QPushButton *m_reattach = nullptr;
    SteadyLabel *m_straggler = nullptr;
    QComboBox *m_heatmapMetric = nullptr;
    StepHeatmapView *m_heatmap = nullptr;
    RankStepsView *m_rankSteps = nullptr;
    StepsShown m_stepsShown = StepsShown::Heatmap;
};

} // namespace rankdeck
