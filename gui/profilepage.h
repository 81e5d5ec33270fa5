// SPDX-License-Identifier: GPL-3.0-or-later
//
// The run view's Profile tab: where each rank's Python main thread spends its time, from the
// stacks the launcher sampled (one collapsed-stack profile per rank). A slow rank is found on
// the Overview; this page says why it is slow, in a sentence (its three frames with the most
// own time) and as a flame graph; "Compare with the other ranks" colours the graph by how this
// rank differs from the average of the others, which is what a straggler's graph needs (its own
// graph alone looks like any other rank's when all spend most time in the same collective).
//
// The page does no sampling: "Profile 10 s" asks for it (profileRequested()), and whoever
// records gives the result back with setProfiles(). Export writes the shown rank's profile in
// the collapsed format that flamegraph.pl and speedscope read.
#pragma once

#include <QHash>
#include <QMap>
#include <QString>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;

namespace rankdeck {

class FlameGraphView;

class ProfilePage : public QWidget
{
    Q_OBJECT
public:
    using Profile = QHash<QString, qint64>; // stack (root first, ';'-joined) → samples
    // How long the button asks to sample.
    static constexpr int kProfileSeconds = 10;
    // The others' average is kept at this many counts, whatever the rank's own total, so that
    // a frame a few others spend 0.1 % in does not round to nothing.
    static constexpr qint64 kBaselineResolution = 1'000'000;

    explicit ProfilePage(QWidget *parent = nullptr);

    // origin: how and when they were recorded ("recorded 10 s at 20 Hz, 12:01:05"). The
    // selected rank stays when it is still there; else the first is shown. Ends setBusy().
    void setProfiles(const QMap<int, Profile> &perRank, const QString &origin);
    // A recording under way: the button waits, the status says text.
    void setBusy(const QString &text);
    // Whether a profile can be asked for now (not once the run has ended), and why not.
    void setAvailable(bool available, const QString &whyNot = QString());

    QList<int> ranks() const { return m_profiles.keys(); }
    // The rank shown, -1 without profiles.
    int selectedRank() const;
    void setSelectedRank(int rank);
    bool isDifferential() const;
    void setDifferential(bool on);
    // What the summary line says.
    QString summaryText() const;
    FlameGraphView *flameGraph() const { return m_view; }

    // Writes the shown rank's profile as "stack count" lines sorted by stack; false with a
    // sentence in *error (when given) when there is nothing to write or the file cannot be.
    bool exportTo(const QString &path, QString *error) const;

signals:
    void profileRequested(int seconds);

private:
    void showRank();
    void updateControls();
    void exportWithDialog();

    QMap<int, Profile> m_profiles;
    QString m_origin;
    QString m_busyText;
    QString m_whyNot;
    QString m_note; // the last export's outcome, until the next profile
    bool m_busy = false;
    bool m_available = true;

    QPushButton *m_profile = nullptr;
    QComboBox *m_rank = nullptr;
    QCheckBox *m_differential = nullptr;
    QLabel *m_status = nullptr;
    QLabel *m_summary = nullptr;
    FlameGraphView *m_view = nullptr;
    QPushButton *m_export = nullptr;
};

} // namespace rankdeck
