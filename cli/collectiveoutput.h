// SPDX-License-Identifier: GPL-3.0-or-later
//
// What rankdeck-cli says about why a run's ranks are stuck (issue 26), from its record: the
// collective verdict at the top of `show` and `stacks`, the fallback to the ranks' stacks when
// there is none (recording off, no dump), `show --json`, and `export --flight-recorder`, which
// writes a collection's pickles the way torch's analyser reads them.
#pragma once

#include <QJsonObject>
#include <QString>
#include <QTextStream>

namespace rankdeck {
class RunRecord;
}

namespace rankdeck::cli {

class CollectiveOutput
{
public:
    // The newest dump in a stacks-rank-<R>.txt: its header line ("=== <µs> (<reason>)") and body.
    static bool lastStackDump(const QString &path, qint64 *timeUs, QString *reason, QString *body);

    // The verdict block for the top of `show`/`stacks`: the shown verdict with torch's
    // analyser command; for a hung run without one (or whose verdict names no rank), why not
    // and where each rank waits by its last stacks (past RankOutput::MaxRanksEach ranks, ranks
    // in the same place as one entry, unless allRanks: `show --all-ranks`). Nothing for a run
    // with neither. Returns whether it printed anything.
    static bool print(QTextStream &out, const RunRecord &record, const QJsonObject &state,
                      bool allRanks = false);

    // `show --json`: state.json as it is, plus "directory", "failure_report" (failure.json,
    // null without one) and "collective_verdict" (the shown verdict, null without one).
    static QJsonObject showJson(const RunRecord &record, const QJsonObject &state);

    // `export --flight-recorder DIR [--collection ID]`: the pickles of collection `id` (0: the
    // newest that has any) as DIR/rank_<r>. false and *error when there is none or DIR cannot
    // be written; *summary says what was written.
    static bool exportPickles(const RunRecord &record, qint64 id, const QString &directory,
                              QString *summary, QString *error);

    // The newest collection id in the record (0: none), and whether its collection.json has
    // its verdict yet (`stacks` waits for the one its request made).
    static qint64 newestCollection(const RunRecord &record, bool *hasVerdict = nullptr);
};

} // namespace rankdeck::cli
