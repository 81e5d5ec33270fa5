// SPDX-License-Identifier: GPL-3.0-or-later
#include "profilepage.h"

#include "flamegraphview.h"
#include "models/flamegraphlayout.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSaveFile>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include <algorithm>

namespace rankdeck {

namespace {

// Frames the summary line names.
constexpr int kSummaryFrames = 3;

bool hasFrame(const QString &stack)
{
    return !stack.split(u';', Qt::SkipEmptyParts).isEmpty();
}

} // namespace

ProfilePage::ProfilePage(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("profilePage"));

    m_profile = new QPushButton(tr("Profile &%1 s").arg(kProfileSeconds), this);
    m_profile->setObjectName(QStringLiteral("profileButton"));
    connect(m_profile, &QPushButton::clicked, this,
            [this] { emit profileRequested(kProfileSeconds); });

    auto *rankLabel = new QLabel(tr("Ra&nk:"), this);
    m_rank = new QComboBox(this);
    m_rank->setObjectName(QStringLiteral("profileRank"));
    m_rank->setAccessibleName(tr("Rank"));
    m_rank->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    rankLabel->setBuddy(m_rank);
    connect(m_rank, &QComboBox::currentIndexChanged, this, [this] { showRank(); });

    m_differential = new QCheckBox(tr("&Compare with the other ranks"), this);
    m_differential->setObjectName(QStringLiteral("profileDifferential"));
    connect(m_differential, &QCheckBox::toggled, this, [this] { showRank(); });

    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("profileStatus"));
    m_status->setTextFormat(Qt::PlainText);
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);

    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("profileSummary"));
    m_summary->setTextFormat(Qt::PlainText);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_view = new FlameGraphView;
    m_view->setBaselineName(tr("others"));
    m_view->setAccessibleName(tr("Flame graph"));
    auto *scroll = new QScrollArea(this);
    scroll->setObjectName(QStringLiteral("flameGraphScroll"));
    scroll->setWidgetResizable(true);
    scroll->setWidget(m_view);

    m_export = new QPushButton(tr("&Export…"), this);
    m_export->setObjectName(QStringLiteral("profileExport"));
    m_export->setToolTip(tr("Save the shown rank's profile as collapsed stacks (one \"stack "
                            "count\" line per stack), which flamegraph.pl and speedscope read"));
    connect(m_export, &QPushButton::clicked, this, &ProfilePage::exportWithDialog);

    // The row's controls keep to its top line while the status wraps beside them: the label
    // and the check box as tall as the combo box, so that their texts line up with its.
    rankLabel->setMinimumHeight(m_rank->sizeHint().height());
    m_differential->setMinimumHeight(m_rank->sizeHint().height());
    auto *controls = new QHBoxLayout;
    controls->addWidget(m_profile, 0, Qt::AlignTop);
    controls->addWidget(rankLabel, 0, Qt::AlignTop);
    controls->addWidget(m_rank, 0, Qt::AlignTop);
    controls->addWidget(m_differential, 0, Qt::AlignTop);
    controls->addWidget(m_status, 1);
    auto *bottom = new QHBoxLayout;
    bottom->addStretch(1);
    bottom->addWidget(m_export);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(m_summary);
    layout->addWidget(scroll, 1);
    layout->addLayout(bottom);

    showRank();
}

void ProfilePage::setProfiles(const QMap<int, Profile> &perRank, const QString &origin)
{
    const int keep = selectedRank();
    m_profiles = perRank;
    m_origin = origin;
    m_busy = false;
    m_busyText.clear();
    m_note.clear();
    {
        // One picture for the new profiles, not one per item the combo box gains.
        const QSignalBlocker block(m_rank);
        m_rank->clear();
        for (auto it = m_profiles.cbegin(); it != m_profiles.cend(); ++it)
            m_rank->addItem(tr("Rank %1").arg(it.key()), it.key());
        const int at = m_rank->findData(keep);
        m_rank->setCurrentIndex(at >= 0 ? at : (m_rank->count() > 0 ? 0 : -1));
    }
    showRank();
}

void ProfilePage::setBusy(const QString &text)
{
    m_busy = true;
    m_busyText = text;
    updateControls();
}

void ProfilePage::setAvailable(bool available, const QString &whyNot)
{
    m_available = available;
    m_whyNot = available ? QString() : whyNot;
    updateControls();
}

int ProfilePage::selectedRank() const
{
    const QVariant current = m_rank->currentData();
    return current.isValid() ? current.toInt() : -1;
}

void ProfilePage::setSelectedRank(int rank)
{
    const int at = m_rank->findData(rank);
    if (at >= 0)
        m_rank->setCurrentIndex(at);
}

bool ProfilePage::isDifferential() const
{
    return m_differential->isChecked();
}

void ProfilePage::setDifferential(bool on)
{
    m_differential->setChecked(on);
}

QString ProfilePage::summaryText() const
{
    return m_summary->text();
}

void ProfilePage::showRank()
{
    const int rank = selectedRank();
    const bool shown = rank >= 0 && m_profiles.contains(rank);
    if (!shown) {
        m_view->setAccessibleName(tr("Flame graph"));
        m_view->setEmptyText(m_profiles.isEmpty()
                                 ? tr("No profile yet. “Profile %1 s” samples every rank's Python "
                                      "main thread and shows here where each spends its time.")
                                       .arg(kProfileSeconds)
                                 : tr("No rank chosen"));
        m_view->setFlameGraph({});
        m_summary->setText(QString());
        m_summary->hide();
        updateControls();
        return;
    }
    const Profile &own = m_profiles[rank];
    Profile baseline;
    if (isDifferential()) {
        QList<Profile> others;
        for (auto it = m_profiles.cbegin(); it != m_profiles.cend(); ++it) {
            if (it.key() != rank)
                others.append(it.value());
        }
        baseline = FlameGraphLayout::averageProfile(others, kBaselineResolution);
    }
    const FlameGraphLayout graph(own, baseline);
    m_view->setAccessibleName(tr("Flame graph of rank %1").arg(rank));
    m_view->setEmptyText(tr("Rank %1 sent no samples: its main thread was not sampled while the "
                            "profile was recorded")
                             .arg(rank));
    m_view->setFlameGraph(graph);

    QString summary;
    if (graph.isEmpty()) {
        summary = tr("Rank %1: no samples.").arg(rank);
    } else {
        QStringList parts;
        const QList<FlameGraphLayout::HotFrame> hot = graph.hottest(kSummaryFrames);
        for (const FlameGraphLayout::HotFrame &f : hot) {
            const QString share = FlameGraphView::percentText(f.selfShare);
            parts << (graph.hasBaseline()
                          ? tr("%1 %2 (others %3)")
                                .arg(f.frame, share,
                                     FlameGraphView::percentText(f.baselineSelfShare))
                          : tr("%1 %2").arg(f.frame, share));
        }
        summary = tr("Rank %1 spends its time (%2 samples, by time in the frame itself) in: %3")
                      .arg(QString::number(rank), QString::number(graph.total()),
                           parts.join(QStringLiteral("; ")));
        if (graph.droppedNodes() > 0)
            summary += QLatin1Char(' ') +
                       tr("The graph leaves out its %1 smallest frames.").arg(graph.droppedNodes());
    }
    m_summary->setText(summary);
    m_summary->show();
    updateControls();
}

void ProfilePage::updateControls()
{
    m_profile->setEnabled(m_available && !m_busy);
    m_profile->setToolTip(m_available ? tr("Sample every rank's Python main thread for %1 s and "
                                           "show where each spends its time")
                                            .arg(kProfileSeconds)
                                      : m_whyNot);
    m_rank->setEnabled(m_rank->count() > 1);
    const bool others = m_profiles.size() > 1;
    m_differential->setEnabled(others);
    m_differential->setToolTip(
        others ? tr("Colour the graph by how this rank differs from the average of the other "
                    "ranks: red where it spends a larger share of its time, blue a smaller one")
               : tr("There is no other rank to compare with"));
    m_export->setEnabled(!m_view->flameGraph().isEmpty());

    QStringList status;
    if (m_busy) {
        status << m_busyText;
    } else {
        if (!m_available && !m_whyNot.isEmpty())
            status << m_whyNot;
        if (!m_profiles.isEmpty() && !m_origin.isEmpty())
            status << tr("Profile %1.").arg(m_origin);
        if (!m_note.isEmpty())
            status << m_note;
    }
    m_status->setText(status.join(QLatin1Char(' ')));
}

bool ProfilePage::exportTo(const QString &path, QString *error) const
{
    const auto fail = [error](const QString &why) {
        if (error)
            *error = why;
        return false;
    };
    const int rank = selectedRank();
    if (rank < 0 || !m_profiles.contains(rank))
        return fail(tr("There is no profile to export."));
    const Profile &profile = m_profiles[rank];
    QStringList stacks;
    for (auto it = profile.cbegin(); it != profile.cend(); ++it) {
        // What flamegraph.pl could not read back is left out, as the graph leaves it out.
        if (it.value() > 0 && hasFrame(it.key()))
            stacks << it.key();
    }
    std::sort(stacks.begin(), stacks.end());
    QByteArray text;
    for (const QString &stack : std::as_const(stacks))
        text += stack.toUtf8() + ' ' + QByteArray::number(profile.value(stack)) + '\n';
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(text) != text.size() || !file.commit())
        return fail(
            tr("Could not write %1: %2").arg(QDir::toNativeSeparators(path), file.errorString()));
    return true;
}

void ProfilePage::exportWithDialog()
{
    const int rank = selectedRank();
    if (rank < 0)
        return;
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export the profile of rank %1").arg(rank),
        QDir::home().filePath(QStringLiteral("rank%1.folded").arg(rank)),
        tr("Collapsed stacks (*.folded *.txt);;All files (*)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!exportTo(path, &error)) {
        QMessageBox::warning(this, tr("Export profile"), error);
        return;
    }
    m_note = tr("Rank %1's profile saved to %2.")
                 .arg(QString::number(rank), QDir::toNativeSeparators(path));
    updateControls();
}

} // namespace rankdeck
