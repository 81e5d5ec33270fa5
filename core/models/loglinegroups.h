// SPDX-License-Identifier: GPL-3.0-or-later
//
// The merged view's entries after collapsing: identical lines that several ranks printed at
// about the same time become one group ("[r0–7 ×8] NCCL INFO …"), every other line an entry
// of its own. Plain data with no Qt model, so that the grouping rules can be tested and measured
// on their own; CollapsedLogModel turns it into rows.
//
// When a line joins a group (all of these hold):
//   - same display text (LineSplitter already dropped the trailing '\r' and ANSI codes) and same
//     stream: a stderr copy of a stdout line has another severity and keeps its own row;
//   - a rank the group has no line of yet, so a group holds one line per rank and its memory is
//     O(ranks), never O(lines). A rank that repeats itself starts a new group, and the next
//     rank's line joins the oldest open group that lacks it (up to 8 open groups per text), so a
//     fast rank's two "epoch done" lines and a slow rank's two still pair up;
//   - within `windowUs` (2 s) of the group's first line;
//   - the group is among the last `maxDistance` (256) entries: enough for every rank's burst of
//     start-up lines to find its peers, not so much that a row far above what the user reads
//     keeps changing. Truncated lines join only lines of the same full length (their shown text
//     is only a prefix).
// Memory: the open groups are found through one hash per stream holding at most `maxDistance`
// keys (older ones are pruned as entries are added), so it stays bounded however long the run.
#pragma once

#include "stream/logline.h"

#include <QHash>
#include <QList>
#include <QString>

#include <algorithm>
#include <deque>
#include <vector>

namespace rankdeck {

class LogLineGroups
{
public:
    struct Options
    {
        qint64 windowUs = 2'000'000;
        int maxDistance = 256; // entries; 0 or less: nothing collapses
    };

    // One line of a group, without its text (the group's text is the same for all).
    struct Member
    {
        qint64 timeUs = 0;
        qint64 sequence = -1;
        qint64 number = -1;
        qint64 byteLength = 0;
        int rank = -1;
        bool truncated = false;
    };

    struct Group
    {
        QString text;
        StreamKind stream = StreamKind::Stdout;
        QList<Member> members;  // arrival order: members[0] is the first line
        std::vector<int> ranks; // sorted, one per member; empty while there is only one
                                // (most entries: no allocation for them)
        bool expanded = false;
        // Rows it takes in the view: the entry, and its lines when expanded.
        int rows() const { return 1 + (expanded ? int(members.size()) : 0); }
        bool isGroup() const { return members.size() > 1; }
        const Member &first() const { return members.first(); }
        bool hasRank(int rank) const
        {
            return ranks.empty() ? first().rank == rank
                                 : std::binary_search(ranks.begin(), ranks.end(), rank);
        }
    };

    LogLineGroups();
    explicit LogLineGroups(const Options &options);

    const Options &options() const { return m_options; }
    void setOptions(const Options &options);

    int size() const { return int(m_groups.size()); }
    bool isEmpty() const { return m_groups.isEmpty(); }
    const Group &at(int index) const { return m_groups.at(index); }
    Group &at(int index) { return m_groups[index]; }

    // The index of the group `line` joins, or -1 when it starts an entry of its own.
    int joinableGroup(const LogLine &line) const;
    void join(int index, const LogLine &line);
    // Appends `line` as a new entry (and the group that later lines may join); returns its index.
    int append(const LogLine &line);
    // Joins the group it may join or appends it; returns the entry's index.
    int add(const LogLine &line);
    // Lines grouped by these options in a set of their own (for lines older than every entry,
    // read back from the record: a group is not continued across that boundary).
    LogLineGroups grouped(const QList<LogLine> &lines) const;
    // Puts `front`'s entries before these (they must be older); returns how many.
    int prepend(LogLineGroups &&front);
    // Removes the first `count` entries.
    void removeFirst(int count);
    // Entries at the front whose first line has a sequence below `sequence` (the lines the
    // source dropped): how many to remove.
    int countFirstBefore(qint64 sequence) const;
    void clear();

    // Lines added through join() over the lifetime (for measurements).
    qint64 joinedLines() const { return m_joined; }

    static Member memberOf(const LogLine &line);
    // "r0–3,5,7–9" from sorted ranks; more than `maxRanges` runs end in ",…".
    static QString rankRanges(const std::vector<int> &sortedRanks, int maxRanges = 8);

private:
    void prune();

    Options m_options;
    QList<Group> m_groups;
    qint64 m_firstSerial = 0; // serial of m_groups[0]; every appended entry takes the next one
    qint64 m_nextSerial = 0;
    static constexpr int kMaxOpenPerText = 8;
    // Serials of the newest entries with one text, oldest first (in place: no allocation).
    struct OpenEntries
    {
        qint64 serials[kMaxOpenPerText];
        int count = 0;
        void push(qint64 serial);
        void removeFirst();
    };
    // Per stream: text → its open entries.
    QHash<QString, OpenEntries> m_open[2];
    struct Recent
    {
        qint64 serial;
        QString text;
        int stream;
    };
    std::deque<Recent> m_recent; // appended entries still within maxDistance, oldest first
    qint64 m_joined = 0;
};

} // namespace rankdeck
