// SPDX-License-Identifier: GPL-3.0-or-later
#include "failurespage.h"

#include "stackframeview.h"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QTextBrowser>
#include <QTextDocument>
#include <QVBoxLayout>

#include <algorithm>

namespace rankdeck {

FailuresPage::FailuresPage(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("failuresPage"));
    m_list = new QListWidget(this);
    m_list->setObjectName(QStringLiteral("failureList"));
    m_list->setAccessibleName(tr("Failures"));
    // A title is read whole: it wraps rather than ending in "(r…".
    m_list->setWordWrap(true);
    m_list->setResizeMode(QListView::Adjust);
    connect(m_list, &QListWidget::currentRowChanged, this, &FailuresPage::showEntry);

    m_details = new QTextBrowser(this);
    m_details->setObjectName(QStringLiteral("failureDetails"));
    m_details->setOpenLinks(false);
    m_details->setAccessibleName(tr("Failure details"));

    m_frames = new StackFrameView(this);
    connect(m_frames, &QAbstractItemView::activated, this, &FailuresPage::activateFrame);

    m_empty = new QLabel(tr("No rank has failed."), this);
    m_empty->setAlignment(Qt::AlignCenter);

    m_copy = new QPushButton(tr("&Copy entry"), this);
    m_copy->setObjectName(QStringLiteral("copyFailureButton"));
    connect(m_copy, &QPushButton::clicked, this, &FailuresPage::copyEntry);
    m_copyAll = new QPushButton(tr("Copy r&eport"), this);
    m_copyAll->setObjectName(QStringLiteral("copyReportButton"));
    connect(m_copyAll, &QPushButton::clicked, this, &FailuresPage::copyReport);

    m_copyCommand = new QPushButton(tr("Copy co&mmand"), this);
    m_copyCommand->setObjectName(QStringLiteral("copyCommandButton"));
    connect(m_copyCommand, &QPushButton::clicked, this, &FailuresPage::copyCommand);
    m_wrap = new QCheckBox(tr("&Wrap lines"), this);
    m_wrap->setObjectName(QStringLiteral("failureWrapCheck"));
    m_wrap->setToolTip(tr("Wrap long lines at the page's width; off, each line is whole on one "
                          "line and the page scrolls sideways"));
    connect(m_wrap, &QCheckBox::toggled, this, [this](bool on) {
        setWrapLines(on);
        QSettings().setValue(QStringLiteral("failures/wrap"), on);
    });

    auto *splitter = new QSplitter(Qt::Horizontal, this);
    // The summary is a few lines; the frames want the height.
    m_detailsSplitter = new QSplitter(Qt::Vertical, this);
    m_detailsSplitter->addWidget(m_details);
    m_detailsSplitter->addWidget(m_frames);
    m_detailsSplitter->setStretchFactor(1, 3);
    // Neither pane can be dragged (or laid out, on a page shown later) to nothing: a few frames
    // and a few summary lines always show.
    m_detailsSplitter->setCollapsible(0, false);
    m_detailsSplitter->setCollapsible(1, false);
    m_frames->setMinimumHeight(6 * fontMetrics().height());
    connect(m_detailsSplitter, &QSplitter::splitterMoved, this, [this] { m_userSized = true; });
    m_detailsSplitter->setSizes({160, 480});
    splitter->addWidget(m_list);
    splitter->addWidget(m_detailsSplitter);
    splitter->setStretchFactor(1, 2);
    // The entry list is short lines; the details hold stack frames that want the width.
    splitter->setSizes({260, 840});

    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_wrap);
    buttons->addStretch();
    buttons->addWidget(m_copyCommand);
    buttons->addWidget(m_copy);
    buttons->addWidget(m_copyAll);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_empty);
    layout->addWidget(splitter, 1);
    layout->addLayout(buttons);
    setEntries({}, QString());
    m_wrap->setChecked(QSettings().value(QStringLiteral("failures/wrap"), true).toBool());
    setWrapLines(m_wrap->isChecked());
}

void FailuresPage::setWrapLines(bool wrap)
{
    const QSignalBlocker blocker(m_wrap);
    m_wrap->setChecked(wrap);
    m_details->setLineWrapMode(wrap ? QTextEdit::WidgetWidth : QTextEdit::NoWrap);
}

bool FailuresPage::wrapLines() const
{
    return m_details->lineWrapMode() != QTextEdit::NoWrap;
}

void FailuresPage::setEntries(const QList<FailureEntry> &entries, const QString &reportText)
{
    const int previous = m_list->currentRow();
    m_entries = entries;
    m_reportText = reportText;
    const QSignalBlocker blocker(m_list);
    m_list->clear();
    for (const FailureEntry &e : entries) {
        auto *item = new QListWidgetItem(e.title, m_list);
        item->setToolTip(e.title);
        if (e.rootCause) {
            QFont f = item->font();
            f.setBold(true);
            item->setFont(f);
        }
    }
    m_empty->setVisible(entries.isEmpty());
    m_copy->setEnabled(!entries.isEmpty());
    m_copyAll->setEnabled(!reportText.isEmpty());
    const int row = entries.isEmpty() ? -1 : qBound(0, previous, int(entries.size()) - 1);
    m_list->setCurrentRow(row);
    showEntry(row);
}

void FailuresPage::selectEntry(int index)
{
    m_list->setCurrentRow(index);
}

QString FailuresPage::detailsText() const
{
    QString text = m_details->toPlainText();
    const QList<StackSection> &stacks = m_frames->frameModel()->sections();
    if (!stacks.isEmpty())
        text += QLatin1Char('\n') + stackSectionsText(stacks);
    return text;
}

void FailuresPage::showEntry(int index)
{
    const bool valid = index >= 0 && index < m_entries.size();
    m_copyCommand->setEnabled(valid && !m_entries[index].commands.isEmpty());
    m_copyCommand->setToolTip(valid ? m_entries[index].commands.join(QLatin1Char('\n'))
                                    : QString());
    if (!valid) {
        m_details->clear();
        m_frames->setSections({});
        showFrames(false);
        return;
    }
    const FailureEntry &e = m_entries[index];
    m_details->setHtml(e.html);
    // Shown first: the columns fit the width the view has when it shows.
    showFrames(!e.stacks.isEmpty());
    m_frames->setSections(e.stacks);
    m_frames->setAccessibleName(e.rank >= 0 ? tr("Stack frames of rank %1").arg(e.rank)
                                            : tr("Stack frames"));
    fitSummary();
}

void FailuresPage::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    // Entries set while another tab was shown were laid out without a height.
    fitSummary();
}

void FailuresPage::fitSummary()
{
    const int total = m_detailsSplitter->height() - m_detailsSplitter->handleWidth();
    if (m_userSized || m_frames->isHidden() || !isVisible() || total <= 0)
        return;
    QTextDocument *doc = m_details->document();
    doc->setTextWidth(m_details->viewport()->width());
    const int want = int(doc->size().height()) + 2 * m_details->frameWidth() + 4;
    const int summary = std::clamp(want, 3 * fontMetrics().height(), std::max(1, total / 2));
    m_detailsSplitter->setSizes({summary, total - summary});
}

void FailuresPage::showFrames(bool show)
{
    if (show == !m_frames->isHidden())
        return;
    // The heights the user dragged come back when the frames show again; until they drag,
    // fitSummary() sizes both panes (neither can collapse).
    if (!show && m_userSized && m_detailsSplitter->isVisible())
        m_frameSizes = m_detailsSplitter->sizes();
    m_frames->setVisible(show);
    if (show && m_userSized && m_frameSizes.value(1) > 0)
        m_detailsSplitter->setSizes(m_frameSizes);
}

void FailuresPage::activateFrame(const QModelIndex &index)
{
    const int entry = m_list->currentRow();
    const StackFrameRow *frame = m_frames->frameModel()->frameAt(index);
    // Headings open and close on a double-click of their own; notes stand for no one frame.
    if (!frame || frame->kind == StackFrameRow::Kind::Note || entry < 0 ||
        entry >= m_entries.size() || m_entries[entry].rank < 0)
        return;
    emit frameActivated(m_entries[entry].rank, frame->file, frame->line, m_entries[entry].timeUs);
}

void FailuresPage::copyEntry()
{
    const int index = m_list->currentRow();
    if (index >= 0 && index < m_entries.size())
        QGuiApplication::clipboard()->setText(m_entries[index].plainText);
}

void FailuresPage::copyCommand()
{
    const int index = m_list->currentRow();
    if (index >= 0 && index < m_entries.size() && !m_entries[index].commands.isEmpty())
        QGuiApplication::clipboard()->setText(m_entries[index].commands.join(QLatin1Char('\n')));
}

void FailuresPage::copyReport()
{
    if (!m_reportText.isEmpty())
        QGuiApplication::clipboard()->setText(m_reportText);
}

} // namespace rankdeck
