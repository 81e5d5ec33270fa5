// SPDX-License-Identifier: GPL-3.0-or-later
//
// A hang in send and recv, which Gloo's flight recorder does not see: torch 2.14's Gloo records
// no point-to-point entry, so both dumps of "rank 0 sends 2 micro-batches, rank 1 receives 3"
// end at the last collective, completed. The stacks say the rest: a rank blocked in recv (or
// send, irecv().wait(), batch_isend_irecv, a pipelining schedule's batched p2p) waits for the
// peer its code line names (`src=0`, `dst=next_rank`, positional); that peer is the culprit when
// it is not in a matching call: "rank 1 waits in recv from rank 0 (train.py:24 in main:
// `dist.recv(t, src=0)`); rank 0 is not sending: it is at train.py:19 in main, in
// clock_nanosleep". Two ranks each receiving from the other are both named (a receive-receive
// deadlock). Without a peer in the line (no source here, or a computed one), the ranks that are
// in no send, receive or collective are named, marked inferred. Given as a MissingRanks verdict
// without a collective number, so that every consumer (state, banner, root cause) treats it as
// the hang it is.
#pragma once

#include "diagnosis/collectiveverdict.h"

#include <optional>

namespace rankdeck {

class CollectiveGroupAnalysis;

class PointToPointAnalysis
{
public:
    // nullopt when no rank is blocked in a point-to-point call. `collectives` says what the
    // flight recorder showed instead ("every rank finished collective #3 of default_pg"); it is
    // kept at the end of the text.
    static std::optional<CollectiveVerdict> examine(const CollectiveGroupAnalysis &analysis,
                                                    const QString &collectives);

    // The peer a code line names for a receive ("src") or a send ("dst"): keyword (also
    // group_src/group_dst) or torch's positional order; -1 when the line does not say it as a
    // number.
    static int peerFromSource(const QString &source, bool receiving);
};

} // namespace rankdeck
