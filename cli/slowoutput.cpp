// SPDX-License-Identifier: GPL-3.0-or-later
#include "slowoutput.h"

#include "cliutil.h"
#include "record/runstatefile.h"
#include "util/printabletext.h"

namespace rankdeck::cli {

void SlowOutput::print(QTextStream &out, const QJsonObject &state, bool evidence, bool program)
{
    const RunStateFile f = RunStateFile::fromJson(state);
    const bool any = f.slowRank >= 0 || !f.timeSplit.isEmpty();
    if (!evidence) {
        if (f.slowRank >= 0)
            out << '\n'
                << CliUtil::tr("Slow:      %1").arg(printableLabel(f.slowText, 2000)) << '\n';
        return;
    }
    out << '\n'
        << CliUtil::tr("Why slow (each rank's sampled stacks and /proc, last 10 s):") << '\n';
    if (!any) {
        out << "  "
            << (program ? CliUtil::tr("no sampled stacks were recorded: the program ended within "
                                      "seconds, is not Python, or sampling was off "
                                      "(RANKDECK_SAMPLE_HZ=0)")
                        : CliUtil::tr("the built-in worker reports its step and communication "
                                      "times instead (Step time above)"))
            << '\n';
        return;
    }
    if (f.slowRank >= 0)
        out << "  " << printableLabel(f.slowText, 2000) << '\n';
    else
        out << "  " << CliUtil::tr("no straggler: no rank waits far less than the others") << '\n';
    if (!f.timeSplit.isEmpty())
        out << "  "
            << (f.slowRank >= 0 ? CliUtil::tr("the other ranks: %1")
                                : CliUtil::tr("where the time goes: %1"))
                   .arg(printableLabel(f.timeSplit, 1000))
            << '\n';
    for (const QString &line : f.slowEvidence)
        out << "  " << printableLabel(line, 1000) << '\n';
}

} // namespace rankdeck::cli
