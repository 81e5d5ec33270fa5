// SPDX-License-Identifier: GPL-3.0-or-later
//
// One rank's flight-recorder dump: torch's own JSON (`_dump_fr_trace_json(True, False)` in
// Python, `c10d::dump_fr_trace_json(true, false)` in C++) read into plain data for
// CollectiveVerdict. Shape as torch 2.14.1 writes it (FlightRecorderDetail.hpp, version "2.10"),
// checked on real Gloo dumps (tests/core/diagnosis/data/fr/):
//   {"version": "2.10", "comm_lib_version": "", "nccl_comm_state": {},
//    "pg_config": {"<group name>": {"name": "…", "desc": "…", "ranks": "[0, 1]"}},
//    "pg_status": {"<pg_id>": {"last_enqueued_collective": "10",
//                              "last_started_collective": "-1",
//                              "last_completed_collective": "9"}},
//    "entries": [{"record_id": 9, "pg_id": 0, "process_group": ["0", "default_pg"],
//                 "collective_seq_id": 10, "p2p_seq_id": 0, "op_id": 10,
//                 "profiling_name": "gloo:barrier", "input_sizes": [[21]],
//                 "input_dtypes": ["Float"], "output_sizes": [[21]], "output_dtypes": ["Float"],
//                 "state": "scheduled", "time_created_ns": 1796177462363568402,
//                 "time_discovered_started_ns": 0, "time_discovered_completed_ns": 0,
//                 "retired": false, "timeout_ms": 1800000, "is_p2p": false,
//                 "thread_id": "…", "thread_name": "python"}, …]}
// What the real dumps showed, and what this class and the verdict rely on:
//   - pg_status is keyed by the decimal pg_id (the entries' "pg_id"), its three values are
//     decimal STRINGS, -1 meaning none. Only groups that recorded a collective appear.
//   - "entries" is left out when there are none (recorder off: TORCH_FR_BUFFER_SIZE=0 gives
//     `{"comm_lib_version":"","nccl_comm_state":{},"pg_config":{},"pg_status":{},
//     "version":"2.10"}`); entries are in record order, oldest first, at most the buffer size.
//   - "process_group" is [group name, group desc]: ["0", "default_pg"] for the world group,
//     ["1", "undefined"] for a `new_group([0, 2])` without group_desc. collective_seq_id
//     counts per group from 1; p2p ops count p2p_seq_id instead.
//   - Gloo never sets "state" past "scheduled" (it has no start/end events) and never fills
//     time_discovered_*: what finished shows as "retired": true and in last_completed_collective
//     (a collective that failed with an error counts as finished too). A barrier once showed
//     retired while pg_status still said one less, so both are read. NCCL sets "started" and
//     "completed".
//   - Gloo's pg_config is useless: every group is recorded under the empty name, the last one
//     created wins (`{"": {"name": "", "desc": "", "ranks": "[0, 1]"}}` on ranks 0 and 2 of a
//     4-rank job with a group [0, 2]). Groups with an empty name are dropped here; named ones
//     (NCCL) keep their member ranks.
//   - time_created_ns is wall-clock nanoseconds since the epoch, beyond 2^53: read as qint64.
// Everything is bounded (frlimits) and any bytes give a dump or an error naming what was wrong.
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

namespace rankdeck {

namespace frlimits {
constexpr qsizetype MaxBytes = qsizetype(32) * 1024 * 1024; // 2000 Gloo all_reduces: 941,551 bytes
constexpr qsizetype MaxEntries = 4096;                      // the newest are kept
constexpr qsizetype MaxGroups = 1024;                       // pg_config and pg_status each
constexpr qsizetype MaxString = 256;                        // characters; longer strings are cut
constexpr qsizetype MaxTensors = 64;                        // sizes/dtypes per entry
constexpr qsizetype MaxDims = 16;                           // dimensions per tensor
constexpr qsizetype MaxGroupRanks = 65536;
} // namespace frlimits

struct FlightRecorderEntry
{
    qint64 recordId = 0;
    qint64 pgId = 0;
    QString groupName; // "process_group"[0], e.g. "0"
    QString groupDesc; // "process_group"[1], e.g. "default_pg", "undefined"
    qint64 collectiveSeq = 0;
    qint64 p2pSeq = 0;
    qint64 opId = 0;
    QString backend; // "gloo", "nccl"; empty when profiling_name has no prefix
    QString op;      // profiling_name without the backend: "all_reduce", "barrier"
    QList<QList<qint64>> inputSizes;
    QStringList inputDtypes; // torch's names: "Float", "Long", "BFloat16"
    QList<QList<qint64>> outputSizes;
    QStringList outputDtypes;
    QString state; // "scheduled", "started", "completed"
    qint64 timeCreatedNs = 0;
    qint64 timeoutMs = 0;
    bool isP2p = false;
    bool retired = false;

    // Finished (completed or failed) as far as this entry alone says.
    bool finished() const { return retired || state == QLatin1String("completed"); }
    QString profilingName() const;
    // For people: "all_reduce of 21 float32", "barrier", "all_gather of 2 tensors (4×5, 8)
    // float32"; printable whatever the dump held.
    QString describe() const;
    bool operator==(const FlightRecorderEntry &) const = default;
};

struct FlightRecorderGroup
{
    QString name;
    QString desc;
    QList<int> ranks; // global ranks, as pg_config lists them
    bool operator==(const FlightRecorderGroup &) const = default;
};

struct FlightRecorderGroupStatus
{
    qint64 pgId = 0;
    qint64 lastEnqueued = -1;
    qint64 lastStarted = -1;
    qint64 lastCompleted = -1;
    bool operator==(const FlightRecorderGroupStatus &) const = default;
};

struct FlightRecorderDump
{
    bool valid = false; // false: no dump (default-constructed, or parse failed)
    QString version;
    QList<FlightRecorderGroup> groups; // pg_config, named groups only
    QList<FlightRecorderGroupStatus> status;
    QList<FlightRecorderEntry> entries; // oldest first
    qint64 droppedEntries = 0;          // the oldest, beyond frlimits::MaxEntries

    bool isNull() const { return !valid; }
    const FlightRecorderGroupStatus *statusOf(qint64 pgId) const;
    const FlightRecorderGroup *group(const QString &name) const;

    // On error: a null dump and *error saying what was wrong, e.g. "entry 3: collective_seq_id
    // is not a non-negative integer", "not JSON: unterminated string at offset 812".
    static FlightRecorderDump parse(const QByteArray &json, QString *error = nullptr);
    // torch's shape again, with what this class keeps: parse(toJson()) gives the same dump
    // (droppedEntries aside, which torch's format has no place for).
    QByteArray toJson() const;
    bool operator==(const FlightRecorderDump &) const = default;
};

// torch's dtype name as users write it: "Float" → "float32", "BFloat16" → "bfloat16".
QString frDtypeName(const QString &torchName);
// Elements in tensors of these sizes, all together (a size of no dimensions counts one).
qint64 frNumel(const QList<QList<qint64>> &sizes);

} // namespace rankdeck
