// SPDX-License-Identifier: GPL-3.0-or-later
#include "runview.h"

#include "diagnosis/stragglerreport.h"
#include "failureentries.h"
#include "failurespage.h"
#include "logspage.h"
#include "losspage.h"
#include "models/rankdifferencemodel.h"
#include "models/ranktablemodel.h"
#include "models/stepheatmapcache.h"
#include "overviewpage.h"
#include "profilepage.h"
#include "rankstatedelegate.h"
#include "rankstepsview.h"
#include "record/rankgroups.h"
#include "run/flightrecordercollector.h"
#include "run/runcontroller.h"
#include "stepheatmapview.h"
#include "store/logstore.h"
#include "store/metricsstore.h"

#include <QDateTime>
#include <QDesktopServices>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QMessageBox>
#include <QResizeEvent>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTimer>
#include <QUrl>

#include <algorithm>

namespace rankdeck {

RunView::RunView(QWidget *parent) : QTabWidget(parent)
{
    setObjectName(QStringLiteral("runView"));
    setDocumentMode(true);
    m_overview = new OverviewPage(this);
    m_loss = new LossPage(this);
    m_logs = new LogsPage(this);
    m_failures = new FailuresPage(this);
    m_profile = new ProfilePage(this);
    m_rankModel = new RankTableModel(this);
    // Ranks that differ (root cause, culprits, stuck, failed, straggling) first: at 96 ranks the
    // one that matters is otherwise a screen away.
    auto *sortedRanks = new QSortFilterProxyModel(this);
    sortedRanks->setObjectName(QStringLiteral("rankTableOrder"));
    sortedRanks->setSourceModel(m_rankModel);
    sortedRanks->setSortRole(RankTableModel::UrgencyRole);
    sortedRanks->setDynamicSortFilter(true);
    sortedRanks->sort(RankTableModel::StateColumn);
    m_overview->setRankModel(sortedRanks);
    m_overview->rankTable()->setItemDelegate(new RankStateDelegate(m_overview->rankTable()));
    addTab(m_overview, tr("&Overview"));
    addTab(m_loss, tr("&Loss"));
    addTab(m_logs, tr("Lo&gs"));
    addTab(m_failures, tr("F&ailures"));
    // No mnemonic: every letter of "Profile" is taken on some page; Ctrl+5 and View ▸ Profile.
    addTab(m_profile, tr("Profile"));
    connect(m_profile, &ProfilePage::profileRequested, this, &RunView::requestProfile);
    connect(m_overview, &OverviewPage::rootCauseActivated, this,
            [this] { setCurrentIndex(Failures); });
    connect(m_failures, &FailuresPage::frameActivated, this, &RunView::openFrame);
    connect(m_overview, &OverviewPage::stopRequested, this,
            [this] { requestOnRun(RunRequest::Stop); });
    connect(m_overview, &OverviewPage::killRequested, this, [this] {
        if (!m_run)
            return;
        // SIGKILL cannot be taken back and saves nothing: asked first, as Stop need not be.
        const auto answer = QMessageBox::question(
            this, tr("Kill run"),
            tr("Kill every rank of %1 now?\n\nEach rank's processes get SIGKILL at once: "
               "nothing is saved and no stack dump is taken. Stop asks them to end first.")
                .arg(m_run->name()),
            QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
        if (answer == QMessageBox::Yes)
            requestOnRun(RunRequest::Kill);
    });
    connect(m_overview, &OverviewPage::heatmapMetricChanged, this, [this] { refreshSteps(true); });
    connect(m_overview->heatmapView(), &StepHeatmapView::wantedColumnsChanged, this,
            [this] { refreshSteps(true); });
    connect(m_overview->rankStepsView(), &RankStepsView::wantedColumnsChanged, this,
            [this] { refreshSteps(true); });
    connect(m_overview, &OverviewPage::dumpStacksRequested, this,
            [this] { requestOnRun(RunRequest::DumpStacks); });
    connect(m_overview, &OverviewPage::reattachRequested, this, [this] {
        if (m_run)
            emit reattachRequested(m_run->runId());
    });
    m_emptyHint = new QLabel(this);
    m_emptyHint->setObjectName(QStringLiteral("noRunHint"));
    m_emptyHint->setAlignment(Qt::AlignCenter);
    m_emptyHint->setWordWrap(true);
    m_emptyHint->setAutoFillBackground(true);
    m_emptyHint->setText(
        tr("<h3>No run selected</h3>"
           "<p>Launch one with <b>File ▸ Launch…</b> (Ctrl+L), or pick a run in the list on "
           "the left: past runs open from their records.</p>"
           "<p>Select several runs with Ctrl+click to compare them on the Loss page.</p>"));
    updateEmptyHint();
    // The overview's timer: progress, ETA and state are cheap to recompute from the controller.
    m_timer = new QTimer(this);
    m_timer->setInterval(50);
    connect(m_timer, &QTimer::timeout, this, &RunView::refreshOverview);
}

RunView::~RunView() = default;

void RunView::setComparedRuns(const QList<RunController *> &runs)
{
    QList<LossPage::ComparedRun> compared;
    for (RunController *run : runs) {
        if (run && run->metricsStore())
            compared.append({run->name(), run->runDirectory(), run->metricsStore()});
    }
    m_loss->setComparedRuns(compared.size() >= 2 ? compared : QList<LossPage::ComparedRun>{});
    if (m_loss->isComparing())
        setCurrentIndex(Loss);
    updateEmptyHint();
}

void RunView::resizeEvent(QResizeEvent *event)
{
    QTabWidget::resizeEvent(event);
    m_emptyHint->setGeometry(rect());
}

void RunView::updateEmptyHint()
{
    const bool empty = !m_run && !m_loss->isComparing();
    m_emptyHint->setVisible(empty);
    if (empty) {
        m_emptyHint->setGeometry(rect());
        m_emptyHint->raise();
    }
}

void RunView::setRun(RunController *run)
{
    if (m_loss->isComparing())
        m_loss->setComparedRuns({});
    if (m_run)
        disconnect(m_run, nullptr, this, nullptr);
    m_run = run;
    m_rateStartUs = 0;
    m_rateStartSteps = 0;
    m_stepsGeneration = ~quint64(0);
    m_stepsRefreshedUs = 0;
    m_heatmaps.clear();
    m_overview->rankStepsView()->clear();
    m_overview->setStepsShown(OverviewPage::StepsShown::Nothing);
    bindStores();
    m_overview->clearNodeProgress();
    m_rankModel->setController(run);
    updateEmptyHint();
    m_straggler = -1;
    m_rankModel->setStraggler(-1);
    if (!run) {
        m_timer->stop();
        m_overview->setTitle(QString(), QString(), ShownState::Unknown);
        setTitleText(QString());
        m_overview->setProgress(0, 0, -1);
        m_overview->setRootCause(QString());
        m_overview->setNodeClocks({});
        m_overview->setRunActive(false);
        m_overview->setReattachable(false);
        m_overview->setBatchScript(QString());
        m_overview->setStragglerText(QString(), -1);
        m_overview->heatmapView()->setHeatmap({}, QString());
        m_failures->setEntries({}, QString());
        refreshProfile();
        return;
    }
    // What a Slurm run submitted, exactly (kept in the record as it was sent).
    auto showScript = [this] {
        QString text;
        for (const QString &file : m_run->record().artifacts()) {
            QFile f(m_run->record().directory() + QLatin1Char('/') + file);
            if (f.open(QIODevice::ReadOnly))
                text += QString::fromUtf8(f.readAll());
        }
        m_overview->setBatchScript(text);
    };
    showScript();
    connect(run, &RunController::artifactKept, this, showScript);
    connect(run, &RunController::failureReportChanged, this, &RunView::refreshFailures);
    connect(run, &RunController::collectiveVerdictChanged, this, &RunView::refreshFailures);
    connect(run, &RunController::stacksReceived, this, &RunView::refreshFailures);
    connect(run, &RunController::recordProblemChanged, this, &RunView::refreshFailures);
    connect(run, &RunController::stateChanged, this, &RunView::refreshOverview);
    connect(run, &RunController::destroyed, this, [this] { setRun(nullptr); });
    connect(run, &RunController::nodeProgress, m_overview, &OverviewPage::setNodeProgress);
    connect(run, &RunController::nodeClocksChanged, this, &RunView::refreshClocks);
    connect(run, &RunController::slowVerdictChanged, this, [this] { refreshSteps(true); });
    connect(run, &RunController::profileFinished, this, &RunView::refreshProfile);
    connect(run, &RunController::stateChanged, this, &RunView::refreshProfile);
    refreshProfile();
    refreshClocks();
    refreshReattachable(true);
    m_timer->start();
    refreshOverview();
    refreshFailures();
}

void RunView::requestOnRun(RunRequest request)
{
    if (!m_run)
        return;
    if (!m_run->isReadOnly()) {
        if (request == RunRequest::Stop)
            m_run->stop();
        else if (request == RunRequest::Kill)
            m_run->kill();
        else
            m_run->dumpStacks();
        return;
    }
    // A run another process launched (the CLI, another window, a detached launcher): asked
    // through the request files `rankdeck-cli stop` and `stacks` write, which its launcher
    // polls; what follows shows up in the record this view follows.
    QString error;
    const RunRecord &record = m_run->record();
    const bool ok = request == RunRequest::Stop   ? record.requestStop(&error)
                    : request == RunRequest::Kill ? record.requestKill(&error)
                                                  : record.requestStackDump(&error);
    if (!ok)
        QMessageBox::warning(this, tr("Run %1").arg(m_run->name()), error);
}

void RunView::refreshReattachable(bool force)
{
    const qint64 now = QDateTime::currentMSecsSinceEpoch() * 1000;
    if (!force && now - m_reattachCheckedUs < 1000000)
        return;
    m_reattachCheckedUs = now;
    bool offer = false;
    m_launcherAlive = false;
    if (m_run && m_run->isReadOnly() && !isTerminal(m_run->state())) {
        const RunInfo info = m_run->record().info();
        // Its launcher polls the request files: Stop, Kill and Dump stacks reach it.
        m_launcherAlive = !info.launcherGone && !info.detached;
        // As the run list offers it: its ranks go on on their nodes, and no launcher drives
        // them (local ranks cannot be re-attached).
        offer = !m_run->profile().isLocal() &&
                (info.detached || (info.launcherGone && info.detachable));
    }
    m_overview->setReattachable(offer);
}

// What the ranks' own timestamps (and so the root cause) were corrected by, per node.
void RunView::refreshClocks()
{
    QStringList lines;
    const QMap<int, NodeClock> clocks = m_run->nodeClocks();
    const QList<ProfileNode> &nodes = m_run->profile().nodes;
    for (auto it = clocks.cbegin(); it != clocks.cend(); ++it)
        lines << tr("node %1 (%2): %3")
                     .arg(it.key())
                     .arg(it.key() < nodes.size() ? nodes[it.key()].host : QString(),
                          it->describe());
    m_overview->setNodeClocks(lines);
}

void RunView::bindStores()
{
    // A controller creates its stores in start(): a run shown before it started gets its pages
    // bound on the first refresh after that.
    LogStore *logs = m_run ? m_run->logStore() : nullptr;
    MetricsStore *metrics = m_run ? m_run->metricsStore() : nullptr;
    if (logs != m_boundLogs) {
        m_boundLogs = logs;
        m_logs->setLogStore(logs);
    }
    if (metrics != m_boundMetrics) {
        m_boundMetrics = metrics;
        m_loss->setMetricsStore(metrics);
    }
}

void RunView::refreshOverview()
{
    if (!m_run)
        return;
    bindStores();
    const RunState state = m_run->state();
    // One state, judged as the rank table and the run list judge it: a verdict (a hang, a
    // desync, a straggler) is the run's state, not a note after "running".
    const ShownState shown = shownRunState(state, m_run->verdictFacts(m_straggler));
    QString stateText = shownStateWord(shown);
    if (m_run->attempt() > 0)
        stateText += tr(" (attempt %1)").arg(m_run->attempt() + 1);
    if (!m_run->errorMessage().isEmpty())
        stateText += QStringLiteral(" — ") + m_run->errorMessage();
    m_overview->setTitle(m_run->name(), stateText, shown);
    setTitleText(m_run->name() + QStringLiteral(" — ") + shownStateWord(shown));
    refreshReattachable(isTerminal(state));
    m_overview->setRunActive(!isTerminal(state) && (!m_run->isReadOnly() || m_launcherAlive));

    // Progress is the slowest rank's step out of the total, not the ranks' steps added up: in
    // synchronous training the run is as far as its slowest rank (4 ranks at step 300 of 300
    // read "1200 of 1200", and a failed one "480 of 1200" while the table said 120 / 300).
    qint64 done = -1;
    qint64 total = 0;
    int slowestRank = -1;
    bool ranksDiffer = false;
    qint64 printed = -1; // the furthest step a rank printed (a user's program, no total)
    const QList<RankStatus> statuses = m_run->rankStatuses();
    for (const RankStatus &s : statuses) {
        printed = qMax(printed, s.shownStep());
        if (s.totalSteps <= 0)
            continue;
        total = qMax(total, s.totalSteps);
        const qint64 step = qMax<qint64>(0, s.step);
        if (done >= 0 && step != done)
            ranksDiffer = true;
        if (done < 0 || step < done) {
            done = step;
            slowestRank = s.rank;
        }
    }
    done = qMax<qint64>(0, done);
    // A user's program says no total: "waiting for steps" on a run that ended, or that prints
    // its steps, said what was not so.
    QString withoutTotal;
    if (printed >= 0)
        withoutTotal = isTerminal(state)
                           ? tr("ended at step %1 (as printed; no total known)").arg(printed)
                           : tr("step %1 (as printed; no total known)").arg(printed);
    else if (isTerminal(state))
        withoutTotal = tr("no steps reported");
    double eta = -1;
    const qint64 now = QDateTime::currentMSecsSinceEpoch() * 1000;
    if (!isTerminal(state) && done > 0) {
        // The rate is the slowest rank's, measured from the first step seen, so that start-up
        // time does not skew it and the ETA is when the run, not its fastest rank, ends.
        if (m_rateStartUs == 0) {
            m_rateStartUs = now;
            m_rateStartSteps = done;
        } else if (done > m_rateStartSteps && now > m_rateStartUs) {
            const double perUs = double(done - m_rateStartSteps) / double(now - m_rateStartUs);
            eta = double(total - done) / perUs / 1e6;
        }
    }
    m_overview->setProgress(done, total, eta, withoutTotal,
                            ranksDiffer && !isTerminal(state) ? slowestRank : -1);
    m_logs->setRankStatuses(statuses);
    refreshRankGroups(statuses, isTerminal(state));
    refreshSteps(isTerminal(state));
    if (isTerminal(state))
        m_timer->stop();
}

void RunView::setTitleText(const QString &text)
{
    if (text == m_titleText)
        return;
    m_titleText = text;
    emit titleTextChanged(text);
}

void RunView::refreshRankGroups(const QList<RankStatus> &statuses, bool force)
{
    // Once a second: each rank's last line is read from the store (512 look-ups), and what
    // stands out does not change faster than a reader reads it.
    const qint64 now = QDateTime::currentMSecsSinceEpoch() * 1000;
    if (!force && now - m_rankGroupsRefreshedUs < 1'000'000)
        return;
    m_rankGroupsRefreshedUs = now;
    // A run that fits the rank table's screen needs no summary above it (as `show`).
    constexpr int MaxRanksWithoutSummary = 16;
    m_overview->setRankSummary(statuses.size() > MaxRanksWithoutSummary
                                   ? RankGroups::summary(RankGroups::group(statuses))
                                   : QString());
    const LogStore *logs = m_run ? m_run->logStore() : nullptr;
    m_overview->setRankDifferences(RankDifferenceModel::differences(
        statuses, logs ? RankDifferenceModel::lastLines(*logs) : QHash<int, QString>()));
}

void RunView::refreshSteps(bool force)
{
    const MetricsStore *store = m_run ? m_run->metricsStore() : nullptr;
    if (!store)
        return;
    const quint64 generation = store->generation();
    const qint64 now = QDateTime::currentMSecsSinceEpoch() * 1000;
    // At most four times a second, and never more than 5 % of the GUI thread's time: a live
    // refresh of 512 ranks × 100k steps costs a few ms (the heatmap reads only the new points,
    // docs/benchmarks.md), a rebuild (another metric, a resize) ~100 ms, which then spaces the
    // next ones.
    const qint64 pause = std::max<qint64>(250'000, 20 * m_stepsCostUs);
    if (!force && (generation == m_stepsGeneration || now - m_stepsRefreshedUs < pause))
        return;
    m_stepsGeneration = generation;
    m_stepsRefreshedUs = now;
    QElapsedTimer cost;
    cost.start();
    const StragglerReport report = StragglerReport::analyze(*store, m_run->hostsByRank());
    // A user's program reports no step times: its sampled stacks name the straggler and why.
    const SlowRankVerdict &slow = m_run->slowVerdict();
    const QString reportText = report.found() || !slow.found() ? report.text() : slow.bannerText();
    const int named = report.found() ? report.rank : slow.rank;
    m_overview->setStragglerText(reportText, named);
    m_straggler = named;
    m_rankModel->setStraggler(named);
    if (store->ranks(metric::StepTimeMs).isEmpty()) {
        // No step times (a user's program): the step each rank reached over time, from any
        // metric with a step, shows a rank that falls behind; a long record is read over a few
        // turns of the event loop rather than in one.
        RankStepsView *steps = m_overview->rankStepsView();
        if (steps->refresh(*store))
            QTimer::singleShot(0, this, [this] { refreshSteps(true); });
        m_overview->setStepsShown(steps->isEmpty() ? OverviewPage::StepsShown::Nothing
                                                   : OverviewPage::StepsShown::RankSteps);
        if (named < 0) {
            // Where the time goes, for a healthy job: its sampled stacks' split.
            QString text = steps->summaryText();
            if (!slow.timeSplit.isEmpty())
                text += (text.isEmpty() ? QString() : QStringLiteral("\n")) +
                        tr("Where the time goes: %1").arg(slow.timeSplit);
            m_overview->setStragglerText(text, -1);
        }
        m_stepsCostUs = cost.nsecsElapsed() / 1000;
        return;
    }
    m_overview->setStepsShown(OverviewPage::StepsShown::Heatmap);
    // One grid per metric shown so far: toggling back catches up from where it was.
    StepHeatmapView *view = m_overview->heatmapView();
    QString metric = m_overview->heatmapMetric();
    if (metric == metric::ComputeMs && store->ranks(metric::ComputeMs).isEmpty())
        metric = metric::StepTimeMs; // no communication wait reported: nothing to subtract
    std::unique_ptr<StepHeatmapCache> &heatmap = m_heatmaps[metric];
    if (!heatmap)
        heatmap = std::make_unique<StepHeatmapCache>();
    const int changedFrom = heatmap->update(*store, metric, view->wantedColumns());
    view->setHeatmap(heatmap->heatmap(), tr("ms"), changedFrom);
    m_stepsCostUs = cost.nsecsElapsed() / 1000;
}

void RunView::openFrame(int rank, const QString &file, int, qint64 timeUs)
{
    // A path the rank named that is here too (a local run, a shared file system) opens in the
    // user's viewer; a relative one is the rank's working directory's, not ours.
    const QFileInfo source(file);
    if (source.isAbsolute() && source.isFile() && source.isReadable() &&
        QDesktopServices::openUrl(QUrl::fromLocalFile(file)))
        return;
    // Else the rank's log where it failed says what led there.
    setCurrentIndex(Logs);
    m_logs->showRankAt(rank, timeUs);
}

void RunView::refreshFailures()
{
    if (!m_run)
        return;
    const FailureReport &report = m_run->failureReport();
    QHash<int, QString> dumps;
    for (int rank = 0; rank < m_run->worldSize(); ++rank) {
        const QString stacks = m_run->stacks(rank);
        if (!stacks.isEmpty())
            dumps.insert(rank, stacks);
    }
    QList<FailureEntry> entries = failureEntries(report, dumps);
    // Why the ranks are stuck, by their flight recorders, comes first.
    const FlightRecorderCollector &fr = m_run->flightRecorder();
    const CollectiveVerdict *verdict = fr.shownVerdict();
    if (verdict)
        entries.prepend(collectiveVerdictEntry(*verdict, fr.verdictCollection(),
                                               fr.verdictTrigger(), fr.torchFolder()));
    m_overview->rankTable()->setColumnHidden(RankTableModel::InCollectiveColumn, !verdict);
    QString reportText = report.isEmpty() ? QString() : report.toText();
    if (verdict)
        reportText = verdict->text() + QStringLiteral("\n\n") + reportText;
    m_failures->setEntries(entries, reportText);
    // A record that stopped being written comes first: nothing else on the page is complete.
    const RankFailure *root = report.rootCause();
    QString banner = !m_run->recordProblem().isEmpty()
                         ? tr("Run record incomplete: %1").arg(m_run->rootCauseSummary())
                     : verdict && (!root || root->kind == QLatin1String("collective"))
                         ? collectiveVerdictBanner(*verdict)
                         : rootCauseBanner(report);
    if (banner.isEmpty())
        banner = m_run->rootCauseSummary().isEmpty()
                     ? QString()
                     : tr("Root cause: %1").arg(m_run->rootCauseSummary());
    m_overview->setRootCause(banner);
}

} // namespace rankdeck
