// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/rundata.h"

#include "run/rankpipeline.h"
#include "store/logstore.h"
#include "store/metricsstore.h"

namespace rankdeck {

RunData::RunData() = default;

RunData::~RunData() = default;

void RunData::restoreFrom(const RunStateFile &st, const FailureReport &report)
{
    state = st.state;
    attempt = st.attempt;
    startedUs = st.startedUs;
    masterPort = st.masterPort;
    attempts = st.attempts;
    ranks = st.ranks;
    policy.restore(report);
    rootCauseSummary = st.rootCauseSummary;
}

} // namespace rankdeck
