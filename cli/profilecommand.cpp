// SPDX-License-Identifier: GPL-3.0-or-later
#include "profilecommand.h"

#include "cliutil.h"
#include "record/runrecord.h"
#include "store/collapsedstacks.h"
#include "util/printabletext.h"
#include "wire/wireprotocol.h"

#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QThread>

#include <algorithm>

namespace rankdeck::cli {
namespace {

// The leaf frames a rank was sampled in most: "Samples.__getitem__ (data.py:41) 71 %".
QStringList hottest(const QString &path, int n)
{
    CollapsedStacks::Counts stacks;
    QString error;
    if (!CollapsedStacks::read(path, &stacks, &error))
        return {error};
    const CollapsedStacks::Counts self = CollapsedStacks::leaves(stacks);
    qint64 total = 0;
    for (qint64 c : self)
        total += c;
    QList<QPair<qint64, QString>> sorted;
    for (auto it = self.cbegin(); it != self.cend(); ++it)
        sorted.append({it.value(), it.key()});
    std::sort(sorted.begin(), sorted.end(), [](const auto &a, const auto &b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    QStringList out;
    for (qsizetype i = 0; i < sorted.size() && i < n; ++i)
        out << QStringLiteral("%1 %2 %")
                   .arg(printableLabel(sorted[i].second, 300))
                   .arg(qRound(100.0 * double(sorted[i].first) / double(total)));
    return out;
}

} // namespace

bool ProfileCommand::parseRanks(const QString &text, QList<int> *ranks)
{
    ranks->clear();
    for (const QString &part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QStringList ends = part.trimmed().split(QLatin1Char('-'));
        int from = 0, to = 0;
        if (ends.size() > 2 || !CliUtil::parseInt(ends.first(), 0, 1 << 20, &from) ||
            !CliUtil::parseInt(ends.last(), 0, 1 << 20, &to) || to < from ||
            ranks->size() + (to - from) > 100000)
            return false;
        for (int r = from; r <= to; ++r)
            ranks->append(r);
    }
    return !ranks->isEmpty();
}

int ProfileCommand::run(const QStringList &args)
{
    QCommandLineParser parser;
    parser.addPositionalArgument(QStringLiteral("RUN"), CliUtil::tr("Run id or name."));
    const QCommandLineOption secondsOpt(QStringLiteral("seconds"),
                                        CliUtil::tr("How long to record (default 10)."),
                                        QStringLiteral("N"), QStringLiteral("10"));
    const QCommandLineOption ranksOpt(QStringLiteral("ranks"),
                                      CliUtil::tr("Only these ranks (\"0,2-3\"); default all."),
                                      QStringLiteral("LIST"));
    parser.addOptions({secondsOpt, ranksOpt});
    int code = 0;
    if (!CliUtil::parse(
            parser, args,
            CliUtil::tr("Record every rank's sampled Python stacks of a running run for N seconds "
                        "and write them as collapsed stacks (flamegraph.pl, speedscope), one file "
                        "per rank."),
            &code))
        return code;
    if (parser.positionalArguments().size() != 1)
        return CliUtil::usageError(CliUtil::tr("expected one RUN (a run id or name)"),
                                   args.value(0));
    int seconds = 10;
    if (!CliUtil::parseInt(parser.value(secondsOpt), 1, wire::kMaxProfileSeconds, &seconds))
        return CliUtil::usageError(CliUtil::tr("--seconds: \"%1\" is not a number of seconds "
                                               "from 1 to %2")
                                       .arg(parser.value(secondsOpt))
                                       .arg(wire::kMaxProfileSeconds),
                                   args.value(0));
    QList<int> ranks;
    if (parser.isSet(ranksOpt) && !parseRanks(parser.value(ranksOpt), &ranks))
        return CliUtil::usageError(
            CliUtil::tr("--ranks: \"%1\" is not a list of ranks such as 0,2-3")
                .arg(parser.value(ranksOpt)),
            args.value(0));
    RunRecord record;
    if (!CliUtil::openRun(parser.positionalArguments().constFirst(), &record, &code))
        return code;
    const RunInfo info = record.info();
    if (isTerminal(info.state) || info.launcherGone) {
        CliUtil::err() << CliUtil::tr("rankdeck-cli: run %1 is not running (%2): a profile needs "
                                      "its ranks")
                              .arg(info.id, runStateName(info.state))
                       << '\n';
        return ExitFailed;
    }
    const QDir profiles(record.profilesDirectory());
    const QStringList before = profiles.entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QString error;
    if (!record.requestProfile(seconds, ranks, &error)) {
        CliUtil::err() << QStringLiteral("rankdeck-cli: ") << error << '\n';
        return ExitFailed;
    }
    CliUtil::err() << CliUtil::tr("recording %1 s of every rank's stacks…").arg(seconds) << '\n';
    CliUtil::err().flush();
    QElapsedTimer t;
    t.start();
    QString directory;
    while (directory.isEmpty() && t.elapsed() < qint64(seconds) * 1000 + 30000) {
        QThread::msleep(200);
        for (const QString &d : profiles.entryList(QDir::Dirs | QDir::NoDotAndDotDot))
            if (!before.contains(d) &&
                QFile::exists(profiles.filePath(d + QStringLiteral("/profile.json"))))
                directory = profiles.filePath(d);
        if (directory.isEmpty() && t.elapsed() > 5000 &&
            QFile::exists(record.directory() + QStringLiteral("/profile-request"))) {
            CliUtil::err() << CliUtil::tr("rankdeck-cli: the launcher of run %1 did not take the "
                                          "request (it is gone, or older than this rankdeck-cli)")
                                  .arg(info.id)
                           << '\n';
            QFile::remove(record.directory() + QStringLiteral("/profile-request"));
            return ExitFailed;
        }
    }
    if (directory.isEmpty()) {
        CliUtil::err() << CliUtil::tr("rankdeck-cli: no profile came within %1 s; the launcher log "
                                      "(%2/launcher.log) says why")
                              .arg(seconds + 30)
                              .arg(record.directory())
                       << '\n';
        return ExitFailed;
    }
    QFile metaFile(directory + QStringLiteral("/profile.json"));
    metaFile.open(QIODevice::ReadOnly);
    const QJsonObject meta = QJsonDocument::fromJson(metaFile.readAll()).object();
    const QJsonObject perRank = meta.value(QStringLiteral("ranks")).toObject();
    QTextStream &out = CliUtil::out();
    out << CliUtil::tr("Profile:   %1 s of every rank's sampled stacks").arg(seconds) << '\n';
    out << CliUtil::tr("Directory: %1").arg(directory) << '\n';
    QList<int> order;
    for (const QString &key : perRank.keys())
        order << key.toInt();
    std::sort(order.begin(), order.end());
    int withSamples = 0;
    for (int r : std::as_const(order)) {
        const QJsonObject o = perRank.value(QString::number(r)).toObject();
        const QString file = directory + QStringLiteral("/rank-%1.collapsed").arg(r);
        if (!QFile::exists(file)) {
            out << CliUtil::tr("  rank %1: no samples (%2)")
                       .arg(r)
                       .arg(printableLabel(o.value(QStringLiteral("message")).toString(), 300))
                << '\n';
            continue;
        }
        ++withSamples;
        out << CliUtil::tr("  rank %1: %2 samples, %3")
                   .arg(r)
                   .arg(o.value(QStringLiteral("samples")).toInteger())
                   .arg(QFileInfo(file).fileName())
            << '\n';
        for (const QString &line : hottest(file, 3))
            out << "      " << line << '\n';
    }
    out << CliUtil::tr("Flame graphs: flamegraph.pl rank-0.collapsed > rank-0.svg, or open a file "
                       "in https://speedscope.app")
        << '\n';
    out.flush();
    return withSamples > 0 ? ExitOk : ExitFailed;
}

} // namespace rankdeck::cli
