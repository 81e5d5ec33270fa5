// SPDX-License-Identifier: GPL-3.0-or-later
//
// Why a job is slow, as `show` prints it from state.json's "slow" (the launcher's verdict on
// the supervised ranks' sampled stacks, diagnosis/SlowRankVerdict): one line by default, and
// with --why-slow the evidence behind it, rank by rank.
#pragma once

#include <QJsonObject>
#include <QTextStream>

namespace rankdeck::cli {

class SlowOutput
{
public:
    // `evidence`: --why-slow. `program`: the run is a user's program (else the built-in
    // worker, whose step and communication times speak instead).
    static void print(QTextStream &out, const QJsonObject &state, bool evidence, bool program);
};

} // namespace rankdeck::cli
