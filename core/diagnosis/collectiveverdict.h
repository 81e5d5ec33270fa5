// SPDX-License-Identifier: GPL-3.0-or-later
//
// Why a job is stuck, from every rank's flight-recorder dump: per process group, the first
// collective sequence number at which the ranks part, and what kind of parting it is:
//   - Desync: ranks entered different collectives at N (op, or input size or dtype where the
//     op needs them equal). With 3 or more ranks and a strict majority, the odd ones out are
//     the culprits and the majority the victims; otherwise every side is named a culprit. A
//     rank that died without a dump is a victim here: a desync is what kills a receiving rank
//     under Gloo ("Received data size doesn't match expected size").
//   - MissingRanks: some members entered N and others never did; those are the culprits (with
//     where they are instead), the waiting ones the victims. When every rank that dumped waits
//     in N and the only members unaccounted for are alive ranks that gave no dump (a rank
//     spinning with the GIL held cannot answer), those are named, marked culpritsInferred.
//   - AllEnteredNoneCompleted: every member entered N, none finished it: the transport or the
//     network, not the program; with the last finished collective and how long N has been
//     pending (since the last rank entered it, from time_created_ns and nowNs).
//   - A point-to-point hang, which Gloo's recorder does not see (it records no send or recv):
//     when no collective explains it and a rank's stacks show it blocked in send or recv, the
//     ranks it waits for are named from its code line (PointToPointAnalysis), as MissingRanks.
//   - Healthy: every rank dumped and no collective is stuck. Undecided: not enough data (no
//     dump at all, or the ranks that dumped agree and the rest cannot be compared), with why.
// A Desync is conclusive the moment it is seen; the other kinds mean something only once the
// ranks have stopped making progress (a hang is suspected), since a healthy run dumped at any
// moment can show ranks a collective apart. Group membership: the world group (desc
// "default_pg") holds every rank given; a group that torch's pg_config names (NCCL) holds its
// ranks; any other group (Gloo records no membership) holds the ranks whose dumps show it.
// Example text:
//   collective #10 of default_pg: rank 0 entered barrier (case_uneven.py:23); rank 1 entered
//   all_reduce of 21 float32 (case_uneven.py:20) — the ranks disagree on the next collective
//   (did one rank run more iterations?)
#pragma once

#include "diagnosis/flightrecorderdump.h"

#include <QJsonObject>
#include <QList>
#include <QString>

namespace rankdeck {

// What the integration knows of one rank when it asks for a verdict.
struct RankCollectiveInput
{
    int rank = -1;
    bool alive = true;
    FlightRecorderDump dump; // null: none (see noDumpReason)
    QString noDumpReason;    // e.g. "no answer within 2 s: …", a parse error
    QString where;           // from its stacks, e.g. "train.py:22 in main"; may be empty
    QString nativeFrame;     // e.g. "gloo::allreduce", "nanosleep"; may be empty
    QString p2pCall;         // the point-to-point call it is blocked in (RankPlace); may be empty
    QString callSource;      // the code line of its own frame, where the file is here; may be empty
};

// One rank's cell in the rank table's "in collective" column.
struct RankInCollective
{
    int rank = -1;
    bool hasDump = false;
    QString group;   // the group's label ("default_pg", "group 1")
    qint64 seq = -1; // the collective it waits in; -1: none pending
    QString op;
    // "#19 all_reduce", "#2 all_reduce (group 1)", "none pending", "no dump"
    QString text() const;
    bool operator==(const RankInCollective &) const = default;
};

class CollectiveVerdict
{
public:
    enum class Kind
    {
        Undecided,
        Healthy,
        MissingRanks,
        Desync,
        AllEnteredNoneCompleted
    };

    static CollectiveVerdict compute(const QList<RankCollectiveInput> &inputs, qint64 nowNs);

    Kind kind() const { return m_kind; }
    QString groupName() const { return m_groupName; } // "0"; empty for Healthy/Undecided
    QString groupDesc() const { return m_groupDesc; } // "default_pg", "undefined"
    QString groupLabel() const;                       // "default_pg", "group 1 (ranks 0, 2)"
    QList<int> groupRanks() const { return m_groupRanks; }
    qint64 seq() const { return m_seq; } // the collective where the ranks part; -1: none
    QList<int> culprits() const { return m_culprits; }
    QList<int> victims() const { return m_victims; }
    bool culpritsInferred() const { return m_culpritsInferred; }
    QList<int> ranksWithoutDump() const { return m_noDump; }
    qint64 lastCompletedSeq() const { return m_lastCompleted; } // AllEnteredNoneCompleted
    qint64 pendingNs() const { return m_pendingNs; }            // AllEnteredNoneCompleted
    QList<RankInCollective> inCollective() const { return m_inCollective; }
    const RankInCollective *inCollective(int rank) const;

    QString text() const { return m_text; }         // one paragraph, root cause first
    QString headline() const { return m_headline; } // one short line for a banner

    static QString kindName(Kind kind); // "desync", "missing_ranks", … (the JSON's "kind")
    QJsonObject toJson() const;
    // Bounded like the dump parser; garbage gives an Undecided verdict and *error.
    static CollectiveVerdict fromJson(const QJsonObject &json, QString *error = nullptr);
    bool operator==(const CollectiveVerdict &) const = default;

private:
    friend class CollectiveGroupAnalysis;
    friend class PointToPointAnalysis;
    Kind m_kind = Kind::Undecided;
    QString m_groupName;
    QString m_groupDesc;
    QList<int> m_groupRanks;
    bool m_groupRanksKnown = false; // false: the ranks whose dumps show the group
    qint64 m_seq = -1;
    QList<int> m_culprits;
    QList<int> m_victims;
    bool m_culpritsInferred = false;
    QList<int> m_noDump;
    qint64 m_lastCompleted = -1;
    qint64 m_pendingNs = 0;
    QList<RankInCollective> m_inCollective;
    QString m_text;
    QString m_headline;
};

} // namespace rankdeck
