// SPDX-License-Identifier: GPL-3.0-or-later
#include "runview.h"

#include "failurespage.h"
#include "logspage.h"
#include "losspage.h"
#include "overviewpage.h"

namespace rankdeck {

RunView::RunView(QWidget *parent)
    : QTabWidget(parent)
{
    setObjectName(QStringLiteral("runView"));
    setDocumentMode(true);
    m_overview = new OverviewPage(this);
    m_loss = new LossPage(this);
    m_logs = new LogsPage(this);
    m_failures = new FailuresPage(this);
    addTab(m_overview, tr("&Overview"));
    addTab(m_loss, tr("Lo&ss"));
    addTab(m_logs, tr("Lo&gs"));
    addTab(m_failures, tr("&Failures"));
    connect(m_overview, &OverviewPage::rootCauseActivated, this,
            [this] { setCurrentIndex(Failures); });
}

RunView::~RunView() = default;

} // namespace rankdeck
