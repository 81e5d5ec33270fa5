// SPDX-License-Identifier: GPL-3.0-or-later
#include "collectiveoutput.h"

#include "cliutil.h"
#include "diagnosis/collectiveverdict.h"
#include "diagnosis/rankstackdump.h"
#include "rankoutput.h"
#include "record/rankgroups.h"
#include "record/runrecord.h"
#include "run/flightrecordercollection.h"
#include "util/printabletext.h"

#include <QDir>
#include <QFile>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>

namespace rankdeck::cli {

namespace {

QJsonObject readJson(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly) || f.size() > (16 << 20))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

// A paragraph cut into lines of at most `width` characters, each after `indent`.
QString wrapped(const QString &text, const QString &indent, int width = 100)
{
    QString out, line;
    for (const QString &word : text.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        if (!line.isEmpty() && line.size() + 1 + word.size() > width) {
            out += indent + line + QLatin1Char('\n');
            line.clear();
        }
        line += (line.isEmpty() ? QString() : QStringLiteral(" ")) + word;
    }
    if (!line.isEmpty())
        out += indent + line + QLatin1Char('\n');
    return out;
}

QStringList rankPickles(const QString &folder)
{
    return QDir(folder).entryList({QStringLiteral("rank_*")}, QDir::Files, QDir::Name);
}

// torch's analyser refuses a folder that lacks a rank's dump unless told to go on.
QString analyserFlags(int pickles, int worldSize)
{
    return pickles < worldSize ? QStringLiteral(" --allow-incomplete-ranks") : QString();
}

} // namespace

bool CollectiveOutput::lastStackDump(const QString &path, qint64 *timeUs, QString *reason,
                                     QString *body)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return false;
    const QString text = QString::fromUtf8(f.readAll());
    const qsizetype at = text.lastIndexOf(QStringLiteral("=== "));
    if (at < 0)
        return false;
    const qsizetype eol = text.indexOf(QLatin1Char('\n'), at);
    const QString header = text.mid(at + 4, eol < 0 ? -1 : eol - at - 4);
    *timeUs = header.section(QLatin1Char(' '), 0, 0).toLongLong();
    // A rank's stacks carry its bytes (thread names, Python strings, file names): every reader
    // gets them made safe for a terminal.
    *reason = printableLabel(header.section(QLatin1Char('('), 1).chopped(1), 200);
    *body = eol < 0 ? QString() : printableLines(text.mid(eol + 1).trimmed());
    return true;
}

bool CollectiveOutput::print(QTextStream &out, const RunRecord &record, const QJsonObject &state,
                             bool allRanks)
{
    const QJsonObject fr = state.value(QStringLiteral("flight_recorder")).toObject();
    const bool shown = fr.value(QStringLiteral("verdict_shown")).toBool();
    QString problem;
    const CollectiveVerdict v =
        shown
            ? CollectiveVerdict::fromJson(fr.value(QStringLiteral("verdict")).toObject(), &problem)
            : CollectiveVerdict();
    bool hung = state.value(QStringLiteral("hung")).toBool();
    const QJsonArray ranks = state.value(QStringLiteral("ranks")).toArray();
    for (const auto &r : ranks)
        hung = hung || RankStatus::fromJson(r.toObject()).hung;
    if (!shown && !hung)
        return false;
    if (shown && problem.isEmpty()) {
        const qint64 id = fr.value(QStringLiteral("verdict_collection")).toInteger();
        out << CliUtil::tr("Why the ranks are stuck (flight recorder, collection %1, on %2, %3):")
                   .arg(id)
                   .arg(printableLabel(fr.value(QStringLiteral("verdict_trigger")).toString(), 20),
                        CliUtil::formatTime(fr.value(QStringLiteral("verdict_us")).toInteger()))
            << '\n';
        out << wrapped(printableLabel(v.text(), 8000), QStringLiteral("  "));
        const QString torch = FlightRecorderCollection::torchFolder(record.directory(), id);
        if (const QStringList pickles = rankPickles(torch); !pickles.isEmpty())
            out << CliUtil::tr("  torch's analyser: python -m torch.distributed.flight_recorder."
                               "fr_trace %1 --prefix rank_%2")
                       .arg(torch, analyserFlags(int(pickles.size()), int(ranks.size())))
                << '\n';
    } else if (shown) {
        out << CliUtil::tr("Collective verdict unreadable in state.json: %1").arg(problem) << '\n';
    }
    // Without a verdict that names ranks, the stacks are what there is.
    if (!shown || v.culprits().isEmpty()) {
        const QString off = fr.value(QStringLiteral("off")).toString();
        QString why = shown ? QString()
                      : !off.isEmpty()
                          ? CliUtil::tr("no collective verdict: %1").arg(printableLabel(off, 200))
                          : CliUtil::tr("no collective verdict yet");
        out << (why.isEmpty()
                    ? CliUtil::tr("Where the ranks wait, by their last stacks:")
                    : CliUtil::tr("Hung, %1. Where the ranks wait, by their last stacks:").arg(why))
            << '\n';
        // Each rank's place as lines; at many ranks, ranks in the same place as one entry
        // ("ranks 0–16, 18–511: no stack dump"), in the order of their first rank, unless every
        // rank was asked for.
        QList<QStringList> places;
        QHash<QStringList, qsizetype> placeIndex;
        QList<QList<int>> placeRanks;
        const bool grouped = !allRanks && ranks.size() > RankOutput::MaxRanksEach;
        for (int r = 0; r < ranks.size(); ++r) {
            qint64 t = 0;
            QString reason, body;
            QStringList place;
            if (!lastStackDump(record.stacksPath(r), &t, &reason, &body)) {
                place << CliUtil::tr("no stack dump");
            } else {
                const QStringList waits = whereRankWaits(RankStackDump::split(body));
                if (waits.isEmpty())
                    place << CliUtil::tr("(no thread to show)");
                for (const QString &w : waits)
                    place << printableLabel(w, 300);
            }
            const qsizetype at = grouped ? placeIndex.value(place, -1) : -1;
            if (at >= 0) {
                placeRanks[at] << r;
                continue;
            }
            placeIndex.insert(place, places.size());
            places << place;
            placeRanks << QList<int>{r};
        }
        for (qsizetype i = 0; i < places.size(); ++i) {
            const QList<int> &who = placeRanks[i];
            const QString whom = who.size() == 1
                                     ? CliUtil::tr("rank %1").arg(who.first())
                                     : CliUtil::tr("ranks %1").arg(RankGroups::ranges(who, 8));
            out << QStringLiteral("  %1: %2").arg(whom, places[i].first()) << '\n';
            for (qsizetype j = 1; j < places[i].size(); ++j)
                out << QStringLiteral("          ") << places[i][j] << '\n';
        }
    }
    out << '\n';
    return true;
}

QJsonObject CollectiveOutput::showJson(const RunRecord &record, const QJsonObject &state)
{
    QJsonObject o = state;
    o[QStringLiteral("directory")] = record.directory();
    o[QStringLiteral("rankdeck")] = record.launcherVersion();
    o[QStringLiteral("rankdeck_commit")] = record.launcherCommit();
    const QJsonObject failure = record.readFailureReport();
    o[QStringLiteral("failure_report")] = failure.isEmpty() ? QJsonValue() : QJsonValue(failure);
    const QJsonObject fr = state.value(QStringLiteral("flight_recorder")).toObject();
    o[QStringLiteral("collective_verdict")] = fr.value(QStringLiteral("verdict_shown")).toBool()
                                                  ? fr.value(QStringLiteral("verdict"))
                                                  : QJsonValue();
    return o;
}

qint64 CollectiveOutput::newestCollection(const RunRecord &record, bool *hasVerdict)
{
    const QList<qint64> ids = FlightRecorderCollection::ids(record.directory());
    const qint64 id = ids.isEmpty() ? 0 : ids.last();
    if (hasVerdict)
        *hasVerdict = id > 0 && readJson(FlightRecorderCollection::folder(record.directory(), id) +
                                         QStringLiteral("/collection.json"))
                                    .contains(QStringLiteral("verdict"));
    return id;
}

bool CollectiveOutput::exportPickles(const RunRecord &record, qint64 id, const QString &directory,
                                     QString *summary, QString *error)
{
    const QList<qint64> ids = FlightRecorderCollection::ids(record.directory());
    if (id == 0) {
        for (qsizetype i = ids.size() - 1; i >= 0 && id == 0; --i)
            if (!rankPickles(FlightRecorderCollection::torchFolder(record.directory(), ids[i]))
                     .isEmpty())
                id = ids[i];
        if (id == 0) {
            *error = ids.isEmpty()
                         ? CliUtil::tr("run %1 has no flight-recorder collection").arg(record.id())
                         : CliUtil::tr("no flight-recorder collection of run %1 holds torch's "
                                       "pickles (see flight-recorder/*/collection.json for why)")
                               .arg(record.id());
            return false;
        }
    } else if (!ids.contains(id)) {
        *error =
            CliUtil::tr("run %1 has no flight-recorder collection %2").arg(record.id()).arg(id);
        return false;
    }
    const QString from = FlightRecorderCollection::torchFolder(record.directory(), id);
    const QStringList files = rankPickles(from);
    if (files.isEmpty()) {
        *error = CliUtil::tr("collection %1 of run %2 holds no pickle").arg(id).arg(record.id());
        return false;
    }
    if (!QDir().mkpath(directory)) {
        *error = CliUtil::tr("cannot create %1").arg(directory);
        return false;
    }
    // torch's analyser reads every rank_ file there: others' would be mixed in.
    const QStringList before = rankPickles(directory);
    for (const QString &name : before) {
        if (!files.contains(name)) {
            *error = CliUtil::tr("%1 already holds %2, which is not of this collection; give an "
                                 "empty directory")
                         .arg(directory, name);
            return false;
        }
    }
    for (const QString &name : files) {
        const QString target = QDir(directory).filePath(name);
        QFile::remove(target);
        if (!QFile::copy(QDir(from).filePath(name), target)) {
            *error = CliUtil::tr("cannot write %1").arg(target);
            return false;
        }
    }
    const QJsonObject collection =
        readJson(FlightRecorderCollection::folder(record.directory(), id) +
                 QStringLiteral("/collection.json"));
    const int world = int(collection.value(QStringLiteral("ranks")).toArray().size());
    *summary = CliUtil::tr("%1 pickle(s) of flight-recorder collection %2 (%3) written to %4; "
                           "torchfrtrace %4 --prefix rank_%5 reads them")
                   .arg(files.size())
                   .arg(id)
                   .arg(collection.value(QStringLiteral("trigger")).toString(QStringLiteral("?")),
                        directory, analyserFlags(int(files.size()), world));
    return true;
}

} // namespace rankdeck::cli
