// SPDX-License-Identifier: GPL-3.0-or-later
//
// The "Failures" tab: one entry per failed rank, root cause first; the selected entry's signal
// or exception, message and symbolized stack (the worker's own frames highlighted), and copy to
// clipboard, with long lines wrapped unless the user wants them whole on one line. Purely
// presentational: RunView turns core's FailureReport into entries
// (failureentries.h), so this page does not interpret failures itself.
#pragma once

#include <QList>
#include <QStringList>
#include <QWidget>

class QCheckBox;
class QLabel;
class QListWidget;
class QPushButton;
class QTextBrowser;

namespace rankdeck {

struct FailureEntry
{
    QString title;        // list text: "Rank 1 — SIGSEGV (root cause)"
    QString html;         // details, stack frames in <pre>, own frames highlighted
    QString plainText;    // what "Copy" puts on the clipboard
    QStringList commands; // commands the details show, one per line for "Copy command"
    bool rootCause = false;
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
    QString detailsText() const;
    // Long lines (a file:line, an error message, a command) wrap at the page's width: on unless
    // the user turned it off (remembered).
    void setWrapLines(bool wrap);
    bool wrapLines() const;

public slots:
    void copyEntry();
    void copyReport();
    void copyCommand();

private:
    void showEntry(int index);

    QList<FailureEntry> m_entries;
    QString m_reportText;
    QListWidget *m_list = nullptr;
    QTextBrowser *m_details = nullptr;
    QLabel *m_empty = nullptr;
    QPushButton *m_copy = nullptr;
    QPushButton *m_copyAll = nullptr;
    QPushButton *m_copyCommand = nullptr;
    QCheckBox *m_wrap = nullptr;
};

} // namespace rankdeck
