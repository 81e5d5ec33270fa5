// SPDX-License-Identifier: GPL-3.0-or-later
//
// The "Failures" tab: one entry per failed rank, root cause first; the selected entry's signal
// or exception and message above, its symbolized stacks below as rows of frames (a
// StackFrameView: the worker's own frames highlighted, the innermost marked), and copy to
// clipboard, with long lines wrapped unless the user wants them whole on one line. Activating a
// frame asks to open its source, or the rank's log where it failed (frameActivated(), routed by
// RunView). Purely presentational: RunView turns core's FailureReport into entries
// (failureentries.h), so this page does not interpret failures itself.
#pragma once

#include "stackframemodel.h"

#include <QList>
#include <QStringList>
#include <QWidget>

class QCheckBox;
class QLabel;
class QListWidget;
class QPushButton;
class QSplitter;
class QTextBrowser;

namespace rankdeck {

class StackFrameView;

struct FailureEntry
{
    QString title;              // list text: "Rank 1 — SIGSEGV (root cause)"
    QString html;               // the summary above the stacks: what, signal, message, notes
    QList<StackSection> stacks; // innermost frame first in each; own frames marked
    QString plainText;          // what "Copy" puts on the clipboard
    QStringList commands;       // commands the details show, one per line for "Copy command"
    bool rootCause = false;
    int rank = -1;     // whose stacks they are (a group's: its first rank's); -1: no one rank's
    qint64 timeUs = 0; // when it failed, µs since the epoch, launcher's clock; 0: not known
};

class FailuresPage : public QWidget
{
    Q_OBJECT
public:
    explicit FailuresPage(QWidget *parent = nullptr);

    // reportText: the whole report as text (copied by "Copy report").
    void setEntries(const QList<FailureEntry> &entries, const QString &reportText);
    int entryCount() const { return int(m_entries.size()); }
    const QList<FailureEntry> &entries() const { return m_entries; }
    void selectEntry(int index);
    // The summary and the stacks as text (what the page shows, in reading order).
    QString detailsText() const;
    StackFrameView *frameView() const { return m_frames; }
    // The summary's long lines (an error message, a command) wrap at the page's width: on unless
    // the user turned it off (remembered). Frames are rows of one line either way, each cell
    // whole in its tooltip.
    void setWrapLines(bool wrap);
    bool wrapLines() const;

signals:
    // A frame of the shown entry was activated (double-click, Enter): its file as the rank
    // named it (maybe not on this machine), its line (0: not known), and the entry's rank and
    // time of failure (0: not known), to open the file or else the rank's log at that time.
    void frameActivated(int rank, const QString &file, int line, qint64 timeUs);

public slots:
    void copyEntry();
    void copyReport();
    void copyCommand();

protected:
    void showEvent(QShowEvent *event) override;

private:
    void showEntry(int index);
    // The summary as tall as its text (at most half), the frames the rest, until the user drags.
    void fitSummary();
    void activateFrame(const QModelIndex &index);
    void showFrames(bool show);

    QList<FailureEntry> m_entries;
    QString m_reportText;
    QListWidget *m_list = nullptr;
    QTextBrowser *m_details = nullptr;
    StackFrameView *m_frames = nullptr;
    QSplitter *m_detailsSplitter = nullptr;
    QList<int> m_frameSizes;  // the heights the user dragged, kept while the frames are hidden
    bool m_userSized = false; // the user dragged the summary/frames divider: their heights stay
    QLabel *m_empty = nullptr;
    QPushButton *m_copy = nullptr;
    QPushButton *m_copyAll = nullptr;
    QPushButton *m_copyCommand = nullptr;
    QCheckBox *m_wrap = nullptr;
};

} // namespace rankdeck
