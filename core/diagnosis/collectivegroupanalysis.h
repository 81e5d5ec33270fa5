// SPDX-License-Identifier: GPL-3.0-or-later
//
// CollectiveVerdict's working part: every rank's dump laid out per process group (the
// collectives it entered by sequence number, the last it entered and the last it finished), and
// the examination of one group, which gives that group's own verdict. CollectiveVerdict::compute
// picks among the groups' verdicts. What counts as entered and finished: the highest
// collective_seq_id recorded or pg_status' last_enqueued_collective; finished: an entry retired
// or "completed", or pg_status' last_completed_collective (see flightrecorderdump.h for why
// both). p2p entries (send/recv) have no collective number and are left out.
#pragma once

#include "diagnosis/collectiveverdict.h"

#include <QHash>
#include <QList>
#include <QMap>
#include <QString>

namespace rankdeck {

class CollectiveGroupAnalysis
{
public:
    CollectiveGroupAnalysis(const QList<RankCollectiveInput> &inputs, qint64 nowNs);

    QStringList groupNames() const { return m_groups.keys(); }
    bool anyCollective() const; // some dump holds a collective
    QList<int> ranks() const;   // every rank given, once, sorted
    const RankCollectiveInput *input(int rank) const;

    CollectiveVerdict examine(const QString &group) const;
    // The collective a rank waits in (the first it entered and did not finish): in `preferred`
    // when it waits there, else its oldest pending one; seq -1 when none. group: a label.
    RankInCollective waitsIn(int rank, const QString &preferred) const;
    // When the first rank entered this collective (ns since the epoch); max qint64: unknown.
    qint64 firstEnteredNs(const QString &group, qint64 seq) const;
    QString label(const QString &group, bool withRanks) const;

private:
    struct RankGroup
    {
        QMap<qint64, const FlightRecorderEntry *> bySeq; // collectives, not p2p: the last entry
        // Every entry of a collective number, in record order, where there are more than one
        // (the ops of a coalesced group share their number: each is compared, not the end alone).
        QHash<qint64, QList<const FlightRecorderEntry *>> grouped;
        qint64 entered = 0;  // last collective entered; 0: none
        qint64 finished = 0; // last finished
        bool pending() const { return entered > finished; }
    };
    struct RankView
    {
        const RankCollectiveInput *in = nullptr;
        QHash<QString, RankGroup> groups; // by group name
        bool hasDump() const { return in->dump.valid; }
    };
    struct GroupInfo
    {
        QString name;
        QString desc;
        QList<int> members;
        bool membersKnown = false;
    };

    const RankView *view(int rank) const;
    const FlightRecorderEntry *entryAt(const RankView &r, const QString &group, qint64 seq) const;
    // What must agree between ranks at `seq` (every op of a coalesced group), and its words.
    QStringList callAt(const RankView &r, const GroupInfo &g, qint64 seq) const;
    QString describeAt(const RankView &r, const QString &group, qint64 seq) const;
    RankInCollective pendingOf(const RankView &r, const QString &preferred) const;
    QString elsewhere(const RankView &r, const QString &group, const QString &op) const;
    QString whereIn(const RankView &r, const QString &group, qint64 seq) const;
    void desync(const GroupInfo &g, const QList<const RankView *> &dumped, qint64 seq,
                const QList<int> &deadNoDump, CollectiveVerdict *v) const;
    // aliveNoDump: members that gave no dump; those whose stacks show them blocked in a
    // collective count with the ranks that entered `seq` (a rank holding the GIL, a dump that
    // could not be read).
    void missing(const GroupInfo &g, const QList<const RankView *> &dumped, qint64 seq,
                 const QList<int> &aliveNoDump, CollectiveVerdict *v) const;
    void together(const GroupInfo &g, const QList<const RankView *> &dumped, qint64 seq,
                  const QList<int> &noDump, const QList<int> &aliveNoDump,
                  CollectiveVerdict *v) const;

    QList<RankView> m_ranks;
    QMap<QString, GroupInfo> m_groups;
    qint64 m_nowNs = 0;
};

} // namespace rankdeck
