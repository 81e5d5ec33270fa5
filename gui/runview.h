// SPDX-License-Identifier: GPL-3.0-or-later
//
// The centre of the window: the selected run's tabs (Overview, Loss, Logs, Failures). It binds
// the pages to one core run at a time; switching runs re-points the pages, the runs themselves
// live on in core's RunManager.
#pragma once

#include "run/runcontroller.h"

#include <QPointer>
#include <QTabWidget>

#include <map>
#include <memory>

class QLabel;
class QTimer;

namespace rankdeck {

class FailuresPage;
class RankTableModel;
class LogsPage;
class LogStore;
class LossPage;
class MetricsStore;
class OverviewPage;
class ProfilePage;
class StepHeatmapCache;

class RunView : public QTabWidget
{
    Q_OBJECT
public:
    enum Page
    {
        Overview,
        Loss,
        Logs,
        Failures,
        Profile
    };
    Q_ENUM(Page)

    explicit RunView(QWidget *parent = nullptr);
    ~RunView() override;

    OverviewPage *overviewPage() const { return m_overview; }
    LossPage *lossPage() const { return m_loss; }
    LogsPage *logsPage() const { return m_logs; }
    FailuresPage *failuresPage() const { return m_failures; }
    ProfilePage *profilePage() const { return m_profile; }

    // Shows a run (not owned; it lives in core's RunManager). Null shows nothing.
    void setRun(RunController *run);
    // Several runs on the Loss page, overlaid, with what differs between them; empty: back to
    // the run of setRun(). Not owned (core's RunManager keeps them).
    void setComparedRuns(const QList<RunController *> &runs);
    RunController *run() const { return m_run; }
    RankTableModel *rankModel() const { return m_rankModel; }

    // "mlp-4-ranks — stuck": what the window title shows (empty: no run).
    QString titleText() const { return m_titleText; }

signals:
    // The Overview's Re-attach: the shown run, followed from its record, is to be taken over.
    void reattachRequested(const QString &runId);
    void titleTextChanged(const QString &text);

protected:
    void resizeEvent(QResizeEvent *event) override;

private slots:
    void refreshOverview();
    void refreshFailures();
    // The straggler text and the heatmap, from the metrics store; at most twice a second
    // unless forced (a run that ended, the heatmap's metric toggled).
    void refreshRankGroups(const QList<rankdeck::RankStatus> &statuses, bool force);
    void refreshSteps(bool force = false);
    // A frame activated on the Failures page: its file, when it is on this machine, else the
    // rank's log at the time it failed (timeUs 0: its end).
    void openFrame(int rank, const QString &file, int line, qint64 timeUs);

private:
    void refreshClocks();
    void setTitleText(const QString &text);
    enum class RunRequest
    {
        Stop,
        Kill,
        DumpStacks
    };
    // On the run driven here, or through the record's request files on one another process
    // launched (the same requests as `rankdeck-cli stop` and `stacks`).
    void requestOnRun(RunRequest request);
    // Whether the shown run can be re-attached (followed, its launcher gone); read from its
    // record at most once a second.
    void refreshReattachable(bool force);
    void bindStores();
    // With no run and nothing compared, the pages would show a 0 % bar and empty tables; a
    // first-time user sees what to do instead.
    void updateEmptyHint();
    // The Profile page: the newest profile in the run's record, and whether one can be asked
    // for here (runviewprofile.cpp).
    void refreshProfile();
    void showProfile(const QString &directory);
    void requestProfile(int seconds);

    QPointer<RunController> m_run;
    const LogStore *m_boundLogs = nullptr;
    const MetricsStore *m_boundMetrics = nullptr;
    QTimer *m_timer = nullptr;
    RankTableModel *m_rankModel = nullptr;
    qint64 m_rateStartUs = 0;
    qint64 m_rateStartSteps = 0;
    quint64 m_stepsGeneration = ~quint64(0);
    qint64 m_stepsRefreshedUs = 0;
    qint64 m_rankGroupsRefreshedUs = 0;
    qint64 m_reattachCheckedUs = 0;
    qint64 m_stepsCostUs = 0;     // what the last refresh of the straggler text and heatmap took
    int m_straggler = -1;         // the rank the last StragglerReport named
    bool m_launcherAlive = false; // a followed run's launcher runs (it polls requests)
    QString m_titleText;
    std::map<QString, std::unique_ptr<StepHeatmapCache>> m_heatmaps; // by metric
    OverviewPage *m_overview = nullptr;
    LossPage *m_loss = nullptr;
    LogsPage *m_logs = nullptr;
    FailuresPage *m_failures = nullptr;
    ProfilePage *m_profile = nullptr;
    QLabel *m_emptyHint = nullptr;
};

} // namespace rankdeck
