// SPDX-License-Identifier: GPL-3.0-or-later
//
// FlightRecorderDump::parse and CollectiveVerdict::compute on any bytes. Promises checked: a
// parse either fails with a message and no data or gives a dump within frlimits; what it gives,
// written in torch's shape and read again, is the same dump; compute() on 1–3 dumps (whatever
// parsed, the rest as ranks without one) names only ranks it was given, fills one "in
// collective" cell per rank, and survives its own JSON unchanged.
// Input: up to 3 dumps separated by a 0x1e byte (a plain dump file is one dump).
#include "fuzzinput.h"

#include "diagnosis/collectiveverdict.h"
#include "diagnosis/flightrecorderdump.h"

#include <QJsonDocument>

using namespace rankdeck;

namespace {

void checkBounds(const FlightRecorderDump &d)
{
    FUZZ_CHECK(d.entries.size() <= frlimits::MaxEntries);
    FUZZ_CHECK(d.groups.size() <= frlimits::MaxGroups);
    FUZZ_CHECK(d.status.size() <= frlimits::MaxGroups);
    FUZZ_CHECK(d.version.size() <= frlimits::MaxString);
    for (const FlightRecorderGroup &g : d.groups) {
        FUZZ_CHECK(!g.name.isEmpty() && g.name.size() <= frlimits::MaxString);
        FUZZ_CHECK(g.desc.size() <= frlimits::MaxString);
        FUZZ_CHECK(g.ranks.size() <= frlimits::MaxGroupRanks);
    }
    for (const FlightRecorderEntry &e : d.entries) {
        FUZZ_CHECK(e.profilingName().size() <= frlimits::MaxString);
        FUZZ_CHECK(e.groupName.size() <= frlimits::MaxString);
        FUZZ_CHECK(e.groupDesc.size() <= frlimits::MaxString);
        FUZZ_CHECK(e.state.size() <= frlimits::MaxString);
        FUZZ_CHECK(e.collectiveSeq >= 0 && e.timeCreatedNs >= 0 && e.pgId >= 0);
        for (const auto *sizes : {&e.inputSizes, &e.outputSizes}) {
            FUZZ_CHECK(sizes->size() <= frlimits::MaxTensors);
            for (const QList<qint64> &t : *sizes)
                FUZZ_CHECK(t.size() <= frlimits::MaxDims);
        }
        FUZZ_CHECK(e.inputDtypes.size() <= frlimits::MaxTensors);
        FUZZ_CHECK(e.outputDtypes.size() <= frlimits::MaxTensors);
        FUZZ_CHECK(e.describe().size() < 2000);
    }
}

FlightRecorderDump parseChecked(const QByteArray &bytes, QString *error)
{
    FlightRecorderDump d = FlightRecorderDump::parse(bytes, error);
    if (!d.valid) {
        FUZZ_CHECK(!error->isEmpty());
        FUZZ_CHECK(d.entries.isEmpty() && d.status.isEmpty() && d.groups.isEmpty());
        return d;
    }
    FUZZ_CHECK(error->isEmpty());
    checkBounds(d);
    QString again;
    FlightRecorderDump back = FlightRecorderDump::parse(d.toJson(), &again);
    FUZZ_CHECK(back.valid);
    FlightRecorderDump expected = d;
    expected.droppedEntries = 0; // torch's format has no place for it
    FUZZ_CHECK(back == expected);
    return d;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    fuzz::FuzzInput in(data, size);
    QList<RankCollectiveInput> ranks;
    for (int r = 0; r < 3 && !in.atEnd(); ++r) {
        const QByteArray bytes = in.until('\x1e').toByteArray();
        RankCollectiveInput rank;
        rank.rank = r;
        rank.dump = parseChecked(bytes, &rank.noDumpReason);
        rank.alive = bytes.size() % 3 != 0;
        if (bytes.size() % 2)
            rank.where = QStringLiteral("train.py:%1 in main").arg(bytes.size());
        // The point-to-point path reads a code line from the node: hostile bytes too.
        if (bytes.size() % 5 < 2) {
            rank.p2pCall = bytes.size() % 5 ? QStringLiteral("recv") : QStringLiteral("send");
            rank.callSource = QString::fromUtf8(bytes.left(200));
        }
        ranks << rank;
    }
    if (ranks.isEmpty())
        ranks << RankCollectiveInput{0, true, {}, QStringLiteral("no bytes"), {}, {}, {}, {}};

    const CollectiveVerdict v = CollectiveVerdict::compute(ranks, 1'800'000'000'000'000'000LL);
    FUZZ_CHECK(!v.text().isEmpty() && !v.headline().isEmpty());
    FUZZ_CHECK(v.inCollective().size() == ranks.size());
    for (const QList<int> &list : {v.culprits(), v.victims(), v.ranksWithoutDump()})
        for (int r : list)
            FUZZ_CHECK(r >= 0 && r < ranks.size());
    for (const RankInCollective &c : v.inCollective())
        (void)c.text();
    QString error;
    FUZZ_CHECK(CollectiveVerdict::fromJson(v.toJson(), &error) == v);
    FUZZ_CHECK(error.isEmpty());
    // What the record keeps goes through a file: the same again from its bytes.
    const QJsonDocument doc = QJsonDocument::fromJson(QJsonDocument(v.toJson()).toJson());
    FUZZ_CHECK(CollectiveVerdict::fromJson(doc.object()) == v);
    return 0;
}
