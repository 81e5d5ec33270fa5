// SPDX-License-Identifier: GPL-3.0-or-later
//
// The real flight-recorder cases of data/fr/ (torch 2.14.1, Gloo) as the tests of diagnosis/
// read them: each rank's files, where its faulthandler dump puts it (and the code line there), and
// every rank of a case as the collective verdict takes it. A test that includes this defines
// RANKDECK_FR_DATA.
#pragma once

#include "diagnosis/collectiveverdict.h"
#include "diagnosis/rankstackdump.h"
#include "stream/pythontraceback.h"

#include <QFile>
#include <QList>
#include <QRegularExpression>
#include <QString>

namespace rankdeck::testing {

// One file of data/fr/; found: whether it exists (without it, a missing file is fatal).
inline QByteArray sample(const QString &name, bool *found = nullptr)
{
    QFile f(QStringLiteral(RANKDECK_FR_DATA "/") + name);
    if (found)
        *found = f.exists();
    if (!f.open(QIODevice::ReadOnly)) {
        if (!found)
            qFatal("missing test data %s", qPrintable(name));
        return {};
    }
    return f.readAll();
}

// Where the rank's faulthandler dump puts it, as the integration takes it (rankPlace: the main
// thread's innermost frame in the user's own code, the point-to-point call it is blocked in),
// with the code line of that frame read from src/, where the case scripts are (the dumps name
// the paths of the machine that made them).
inline void placeFromStack(const QString &text, RankCollectiveInput *in)
{
    const RankPlace place = rankPlace(RankStackDump{QString(), text});
    in->where = place.where;
    in->p2pCall = place.p2pCall;
    if (place.p2pCall.isEmpty() || place.callLine <= 0)
        return;
    bool found = false;
    const QList<QByteArray> lines =
        sample(QStringLiteral("src/") + place.callFile.section(QLatin1Char('/'), -1), &found)
            .split('\n');
    if (found && place.callLine <= lines.size())
        in->callSource = QString::fromUtf8(lines.at(place.callLine - 1)).trimmed();
}

// One real case as the integration hands it over: every rank in ranks.txt, its dump parsed (or
// the parse error as the reason), where its stacks put it, dead or alive; a rank without a dump
// has what ranks.txt says of it as its reason ("died of SIGABRT before the dump").
inline QList<RankCollectiveInput> realCase(const QString &name)
{
    QList<RankCollectiveInput> out;
    static const QRegularExpression line(QStringLiteral(R"(^rank (\d+): (.*); dump: (yes|no)$)"));
    const QString ranks = QString::fromUtf8(sample(name + QStringLiteral("/ranks.txt")));
    for (const QString &l : ranks.split(QLatin1Char('\n'))) {
        const QRegularExpressionMatch m = line.match(l);
        if (!m.hasMatch())
            continue;
        RankCollectiveInput in;
        in.rank = m.captured(1).toInt();
        in.alive = m.captured(2).startsWith(QLatin1String("alive"));
        if (m.captured(3) == QLatin1String("yes")) {
            const QString file = QStringLiteral("%1/rank_%2").arg(name).arg(in.rank);
            in.dump =
                FlightRecorderDump::parse(sample(file + QStringLiteral(".json")), &in.noDumpReason);
            placeFromStack(QString::fromUtf8(sample(file + QStringLiteral(".stack.txt"))), &in);
        } else {
            in.noDumpReason = m.captured(2);
        }
        out << in;
    }
    return out;
}

// When the last collective of any rank was created: a verdict's "now" is counted from it.
inline qint64 lastCreatedNs(const QList<RankCollectiveInput> &ranks)
{
    qint64 last = 0;
    for (const RankCollectiveInput &r : ranks)
        for (const FlightRecorderEntry &e : r.dump.entries)
            last = qMax(last, e.timeCreatedNs);
    return last;
}

} // namespace rankdeck::testing
