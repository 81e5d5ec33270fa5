// SPDX-License-Identifier: GPL-3.0-or-later
//
// The centre of the window: the selected run's tabs (Overview, Loss, Logs, Failures). It binds
// the pages to one core run at a time; switching runs re-points the pages, the runs themselves
// live on in core's RunManager.
#pragma once

#include <QPointer>
#include <QTabWidget>

namespace rankdeck {

class FailuresPage;
class LogsPage;
class LossPage;
class OverviewPage;

class RunView : public QTabWidget
{
    Q_OBJECT
public:
    enum Page { Overview, Loss, Logs, Failures };
    Q_ENUM(Page)

    explicit RunView(QWidget *parent = nullptr);
    ~RunView() override;

    OverviewPage *overviewPage() const { return m_overview; }
    LossPage *lossPage() const { return m_loss; }
    LogsPage *logsPage() const { return m_logs; }
    FailuresPage *failuresPage() const { return m_failures; }

private:
    OverviewPage *m_overview = nullptr;
    LossPage *m_loss = nullptr;
    LogsPage *m_logs = nullptr;
    FailuresPage *m_failures = nullptr;
};

} // namespace rankdeck
