// SPDX-License-Identifier: GPL-3.0-or-later
//
// The ranks a picker offers, narrowed by what the user types (issue 31: at 512 ranks a tab or a
// combo entry per rank is a scroll, not a choice). A filter is words, all of which a rank must
// match:
//   - ranks: "17", "40-41" or "40–41", "3, 7-9" (a word of digits, commas and dashes);
//   - anything else: part of the rank's host ("node03"), or the start of its state as RankGroup
//     labels it ("fail", "hung", "stopped", "silent").
// So "node03 failed" is node03's failed ranks, "hung 0-99" the hung ones among the first 100.
// Ranks keep their order; a filter that matches nothing shows nothing (the picker says so).
#pragma once

#include "record/runstate.h"

#include <QAbstractListModel>
#include <QList>
#include <QPair>

namespace rankdeck {

class RankPickerModel : public QAbstractListModel
{
    Q_OBJECT
public:
    enum Role
    {
        RankRole = Qt::UserRole + 1,
        HostRole,
        StateRole, // int(RankState)
        LabelRole  // "failed (exit 1)", "hung": as RankGroup::label() says it
    };

    explicit RankPickerModel(QObject *parent = nullptr);

    // Every rank of the run, as the controller has them; the shown rows follow the filter.
    // Called on each refresh of the view: rows that stay are changed in place.
    void setRanks(const QList<RankStatus> &ranks);
    void setFilter(const QString &text);
    QString filter() const { return m_filter; }

    int rankAt(int row) const;
    int rowOfRank(int rank) const; // -1 when the rank is not shown
    int totalRanks() const { return int(m_all.size()); }

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;

    // "17", "40-41", "3, 7–9" as closed ranges; false when `word` is not a rank list.
    static bool parseRanks(const QString &word, QList<QPair<int, int>> *ranges);
    // The same label RankGroup gives the rank's group: "finished", "hung", "failed (SIGSEGV)".
    static QString labelOf(const RankStatus &status);

private:
    struct Term
    {
        QList<QPair<int, int>> ranges; // a rank term when not empty
        QString text;                  // else a host or state term (lower case)
    };
    bool matches(const RankStatus &status) const;
    QList<int> rowsFor() const; // indices into m_all that pass the filter

    QList<RankStatus> m_all;
    QList<int> m_rows;
    QString m_filter;
    QList<Term> m_terms;
};

} // namespace rankdeck
