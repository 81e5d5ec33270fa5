// SPDX-License-Identifier: GPL-3.0-or-later
#include "record/runrecord.h"

#include "record/rankgroups.h"

#include "store/compactedfile.h"

#include "util/atomicfile.h"
#include "util/buildversion.h"
#include "util/processidentity.h"
#include "util/translation.h"

#include "config/profilestore.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QRegularExpression>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <unistd.h>

namespace rankdeck {

namespace {
// run.json of a directory, or why there is none that can be read.
QString readRunJson(const QString &directory, QJsonObject *run)
{
    QFile file(directory + QStringLiteral("/run.json"));
    if (!file.exists())
        return tr("run.json is missing");
    if (!file.open(QIODevice::ReadOnly))
        return tr("run.json cannot be read: %1").arg(file.errorString());
    // read(limit) would allocate the whole limit first: 64 MiB for every run.json the run list
    // re-reads while a run goes (twice a second in the soak).
    constexpr qint64 kMaxRunJson = 64 << 20;
    if (file.size() > kMaxRunJson)
        return tr("run.json is larger than %1 MiB").arg(kMaxRunJson >> 20);
    QJsonParseError parse;
    const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &parse);
    if (parse.error != QJsonParseError::NoError)
        return tr("run.json is not JSON (%1 at byte %2)")
            .arg(parse.errorString())
            .arg(parse.offset);
    if (!doc.isObject() || !doc.object().value(QStringLiteral("id")).isString())
        return tr("run.json has no run id");
    *run = doc.object();
    return {};
}

QJsonObject readJson(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

bool makePrivateDir(const QString &path)
{
    if (!QDir().mkpath(path))
        return false;
    return QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                           QFileDevice::ExeOwner);
}

// startTicks 0 (an older record): any process with that pid counts.
bool processAlive(qint64 pid, qint64 startTicks)
{
    if (pid <= 0)
        return false;
    if (::kill(pid_t(pid), 0) != 0 && errno != EPERM)
        return false;
    ProcStat s;
    if (!readProcStat(pid, &s))
        return true; // no /proc to tell by
    // A zombie nobody reaps (containers whose PID 1 never waits) is not a running launcher, and
    // a process that got the pid after the launcher ended is not the launcher.
    return s.state != 'Z' && (startTicks <= 0 || s.startTicks == startTicks);
}
} // namespace

QString RunRecord::defaultRunsDirectory()
{
    QString base = qEnvironmentVariable("XDG_DATA_HOME");
    if (base.isEmpty())
        base = QDir::homePath() + QStringLiteral("/.local/share");
    return base + QStringLiteral("/rankdeck/runs");
}

QString RunRecord::newRunId(const QString &name)
{
    QString clean;
    for (const QChar c : name) {
        if (c.isLetterOrNumber() && c.unicode() < 128)
            clean += c.toLower();
        else if (!clean.endsWith(QLatin1Char('-')))
            clean += QLatin1Char('-');
        if (clean.size() >= 24)
            break;
    }
    while (clean.endsWith(QLatin1Char('-')))
        clean.chop(1);
    if (clean.isEmpty())
        clean = QStringLiteral("run");
    const QString stamp =
        QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd-HHmmss"));
    const QString suffix = QString::number(QRandomGenerator::global()->bounded(0x10000), 16)
                               .rightJustified(4, QLatin1Char('0'));
    return stamp + QLatin1Char('-') + clean + QLatin1Char('-') + suffix;
}

bool RunRecord::create(const QString &runsDirectory, const QString &runId, const QString &name,
                       const Profile &profile, const TrainingConfig &config, QString *error)
{
    static const QRegularExpression validId(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._-]*\\z"));
    if (!validId.match(runId).hasMatch()) {
        *error = tr("invalid run id \"%1\"").arg(runId);
        return false;
    }
    if (!makePrivateDir(runsDirectory)) {
        *error = tr("cannot create %1").arg(runsDirectory);
        return false;
    }
    const QString dir = runsDirectory + QLatin1Char('/') + runId;
    if (QFileInfo::exists(dir)) {
        *error = tr("run directory %1 already exists").arg(dir);
        return false;
    }
    // Made under a hidden name and renamed once run.json is in it: `runs`, `logs` and the GUI
    // never see a run directory without its run.json (nor list it as broken meanwhile).
    const QString making = runsDirectory + QStringLiteral("/.") + runId + QStringLiteral(".new");
    if (!makePrivateDir(making)) {
        *error = tr("cannot create %1").arg(making);
        return false;
    }
    m_id = runId;
    m_name = name;
    m_directory = dir;
    m_profile = profile;
    m_config = config;
    m_createdUs = QDateTime::currentMSecsSinceEpoch() * 1000;

    QJsonObject run;
    run[QStringLiteral("id")] = m_id;
    run[QStringLiteral("name")] = m_name;
    run[QStringLiteral("created_us")] = m_createdUs;
    m_launcherVersion = BuildVersion::version();
    m_launcherCommit = BuildVersion::commit();
    run[QStringLiteral("rankdeck")] = m_launcherVersion;
    run[QStringLiteral("rankdeck_commit")] = m_launcherCommit;
    run[QStringLiteral("profile")] = profile.toJson();
    run[QStringLiteral("config")] = config.toJson();
    QString why;
    // The reserve is plain data, written once: no rename and no sync needed for it.
    QFile reserve(making + QStringLiteral("/.reserve"));
    const QByteArray room(kReserveBytes, '\0');
    if (!reserve.open(QIODevice::WriteOnly) || reserve.write(room) != room.size() ||
        !reserve.flush())
        why =
            tr("cannot write %1: %2").arg(reserve.fileName(), AtomicFile::writeErrorText(reserve));
    reserve.close();
    if (!why.isEmpty() ||
        !AtomicFile::writeFile(making + QStringLiteral("/run.json"), QJsonDocument(run).toJson(),
                               &why) ||
        !AtomicFile::writeFile(making + QStringLiteral("/profile.toml"),
                               ProfileStore::serialize(profile).toUtf8(), &why) ||
        !QDir().rename(making, dir)) {
        if (why.isEmpty())
            why = tr("cannot rename %1 to %2").arg(making, dir);
        // A record that cannot be written is not left behind half-made (a full disk would
        // otherwise leave an empty directory that lists as a broken run).
        QDir(making).removeRecursively();
        *error = tr("cannot create the run record: %1").arg(why);
        return false;
    }
    return true;
}

bool RunRecord::open(const QString &directory, QString *error)
{
    QJsonObject run;
    if (const QString why = readRunJson(directory, &run); !why.isEmpty()) {
        *error = tr("%1 is not a run record: %2").arg(directory, why);
        return false;
    }
    openParsed(directory, run);
    return true;
}

void RunRecord::openParsed(const QString &directory, const QJsonObject &run)
{
    m_directory = QFileInfo(directory).absoluteFilePath();
    m_id = run.value(QStringLiteral("id")).toString();
    m_name = run.value(QStringLiteral("name")).toString();
    m_createdUs = run.value(QStringLiteral("created_us")).toInteger();
    m_launcherVersion = run.value(QStringLiteral("rankdeck")).toString();
    m_launcherCommit = run.value(QStringLiteral("rankdeck_commit")).toString();
    m_profile = Profile::fromJson(run.value(QStringLiteral("profile")).toObject());
    m_config = TrainingConfig::fromJson(run.value(QStringLiteral("config")).toObject());
}

bool RunRecord::releaseReserve()
{
    return !m_directory.isEmpty() && QFile::remove(m_directory + QStringLiteral("/.reserve"));
}

QString RunRecord::nodeRunDirectory() const
{
    return m_directory + QStringLiteral("/node");
}

bool RunRecord::writeState(const QJsonObject &state, QString *error)
{
    return AtomicFile::writeFile(m_directory + QStringLiteral("/state.json"),
                                 QJsonDocument(state).toJson(), error);
}

QJsonObject RunRecord::readState() const
{
    return readJson(m_directory + QStringLiteral("/state.json"));
}

bool RunRecord::writeFailureReport(const QJsonObject &json, const QString &text)
{
    return AtomicFile::writeFile(m_directory + QStringLiteral("/failure.json"),
                                 QJsonDocument(json).toJson()) &&
           AtomicFile::writeFile(m_directory + QStringLiteral("/failure.txt"), text.toUtf8());
}

QJsonObject RunRecord::readFailureReport() const
{
    return readJson(m_directory + QStringLiteral("/failure.json"));
}

QString RunRecord::readFailureText() const
{
    QFile f(m_directory + QStringLiteral("/failure.txt"));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(f.readAll());
}

void RunRecord::appendLauncherLog(const QString &line)
{
    QFile f(m_directory + QStringLiteral("/launcher.log"));
    if (!f.open(QIODevice::Append))
        return;
    const QString stamp = QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs);
    f.write((stamp + QLatin1Char(' ') + line + QLatin1Char('\n')).toUtf8());
}

QString RunRecord::stopRequestPath() const
{
    return m_directory + QStringLiteral("/stop-request");
}

bool RunRecord::requestStop(QString *error) const
{
    QFile f(stopRequestPath());
    if (!f.open(QIODevice::WriteOnly)) {
        *error = tr("cannot write %1: %2").arg(f.fileName(), f.errorString());
        return false;
    }
    f.write(QByteArray::number(QDateTime::currentMSecsSinceEpoch()) + '\n');
    return true;
}

bool RunRecord::stopRequested() const
{
    return QFileInfo::exists(stopRequestPath());
}

bool RunRecord::requestKill(QString *error) const
{
    QFile f(m_directory + QStringLiteral("/kill-request"));
    if (!f.open(QIODevice::WriteOnly)) {
        *error = tr("cannot write %1: %2").arg(f.fileName(), f.errorString());
        return false;
    }
    f.write(QByteArray::number(QDateTime::currentMSecsSinceEpoch()) + '\n');
    return true;
}

bool RunRecord::killRequested() const
{
    return QFileInfo::exists(m_directory + QStringLiteral("/kill-request"));
}

bool RunRecord::requestStackDump(QString *error) const
{
    QFile f(m_directory + QStringLiteral("/stacks-request"));
    if (!f.open(QIODevice::WriteOnly)) {
        *error = tr("cannot write %1: %2").arg(f.fileName(), f.errorString());
        return false;
    }
    return true;
}

bool RunRecord::takeStackDumpRequest() const
{
    return QFile::remove(m_directory + QStringLiteral("/stacks-request"));
}

bool RunRecord::requestProfile(int seconds, const QList<int> &ranks, QString *error) const
{
    QStringList words{QString::number(seconds)};
    for (int r : ranks)
        words << QString::number(r);
    QString why;
    if (!AtomicFile::writeFile(m_directory + QStringLiteral("/profile-request"),
                               words.join(QLatin1Char(' ')).toUtf8() + '\n', &why)) {
        *error = why;
        return false;
    }
    return true;
}

bool RunRecord::takeProfileRequest(int *seconds, QList<int> *ranks) const
{
    QFile f(m_directory + QStringLiteral("/profile-request"));
    if (!f.exists() || !f.open(QIODevice::ReadOnly))
        return false;
    const QStringList words =
        QString::fromUtf8(f.read(4096)).simplified().split(QLatin1Char(' '), Qt::SkipEmptyParts);
    f.remove();
    bool ok = false;
    *seconds = words.value(0).toInt(&ok);
    if (!ok || *seconds < 1)
        return false;
    ranks->clear();
    for (qsizetype i = 1; i < words.size() && ranks->size() < 100000; ++i)
        if (const int r = words[i].toInt(&ok); ok && r >= 0)
            ranks->append(r);
    return true;
}

QString RunRecord::profilesDirectory() const
{
    return m_directory + QStringLiteral("/profiles");
}

bool RunRecord::writeArtifact(const QString &fileName, const QByteArray &content,
                              QString *error) const
{
    static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\\z"));
    // Nor a compressed segment of the record's own files.
    if (!plain.match(fileName).hasMatch() || fileName.endsWith(QLatin1String(".json")) ||
        fileName.endsWith(QLatin1String(".log")) || CompactedFile::parseSegmentName(fileName)) {
        *error = tr("not kept: \"%1\" is not a name for a file of the run record").arg(fileName);
        return false;
    }
    QString why;
    if (!AtomicFile::writeFile(m_directory + QLatin1Char('/') + fileName, content, &why)) {
        *error = tr("cannot keep %1 in the run record: %2").arg(fileName, why);
        return false;
    }
    QFile list(m_directory + QStringLiteral("/artifacts.txt"));
    if (!artifacts().contains(fileName) && list.open(QIODevice::Append))
        list.write(fileName.toUtf8() + '\n');
    return true;
}

QStringList RunRecord::artifacts() const
{
    QFile list(m_directory + QStringLiteral("/artifacts.txt"));
    if (!list.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(list.readAll()).split(u'\n', Qt::SkipEmptyParts);
}

void RunRecord::appendStacks(int rank, qint64 timeUs, const QString &reason,
                             const QString &stacks) const
{
    QFile f(stacksPath(rank));
    if (!f.open(QIODevice::Append))
        return;
    f.write(QStringLiteral("=== %1 (%2)\n").arg(timeUs).arg(reason).toUtf8());
    f.write(stacks.toUtf8());
    f.write("\n");
}

QString RunRecord::stacksPath(int rank) const
{
    return m_directory + QStringLiteral("/stacks-rank-%1.txt").arg(rank);
}

RunInfo RunRecord::info() const
{
    RunInfo i;
    i.id = m_id;
    i.name = m_name;
    i.directory = m_directory;
    i.profileName = m_profile.name;
    i.createdUs = m_createdUs;
    i.worldSize = m_profile.worldSize();
    const QJsonObject state = readState();
    if (!state.isEmpty()) {
        i.state = runStateFromName(state.value(QStringLiteral("state")).toString());
        i.endedUs = state.value(QStringLiteral("ended_us")).toInteger();
        i.attempt = state.value(QStringLiteral("attempt")).toInt();
        i.worldSize = state.value(QStringLiteral("world_size")).toInt(i.worldSize);
        i.rootCause = state.value(QStringLiteral("root_cause_summary")).toString();
        i.hung = state.value(QStringLiteral("hung")).toBool();
        i.slow = state.value(QStringLiteral("slow"))
                     .toObject()
                     .value(QStringLiteral("summary"))
                     .toString()
                     .left(400);
        i.shown = shownRunState(i.state, RunVerdictFacts::fromStateJson(state));
        i.detachable = state.value(QStringLiteral("detach")).toBool();
        QList<RankStatus> ranks;
        for (const QJsonArray items = state.value(QStringLiteral("ranks")).toArray();
             const auto &v : items)
            ranks << RankStatus::fromJson(v.toObject());
        const QList<RankGroup> groups = RankGroups::group(ranks);
        i.rankSummary = RankGroups::summary(groups);
        i.rankGroups = int(groups.size());
        if (!isTerminal(i.state)) {
            i.detached = state.value(QStringLiteral("detached")).toBool();
            i.launcherGone =
                !processAlive(state.value(QStringLiteral("launcher_pid")).toInteger(),
                              state.value(QStringLiteral("launcher_start")).toInteger());
        }
    } else {
        // No state yet: the launcher died before starting, or is starting right now.
        i.shown = ShownState::Starting;
        i.launcherGone = QDateTime::currentMSecsSinceEpoch() * 1000 - m_createdUs > 60'000'000;
    }
    return i;
}

QStringList RunRecord::directories(const QString &runsDirectory)
{
    const QDir dir(runsDirectory);
    QStringList out = dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name | QDir::Reversed);
    for (QString &e : out)
        e = dir.filePath(e);
    return out;
}

bool RunRecord::read(const QString &directory, RunInfo *info)
{
    RunRecord r;
    QString error;
    if (!r.open(directory, &error))
        return false;
    *info = r.info();
    return true;
}

qsizetype RunRecord::insertPosition(const QList<RunInfo> &runs, const RunInfo &run)
{
    // After the runs of the same time: list() sorts stably, in directory order.
    return std::upper_bound(
               runs.cbegin(), runs.cend(), run,
               [](const RunInfo &a, const RunInfo &b) { return a.createdUs > b.createdUs; }) -
           runs.cbegin();
}

RunRecord::Listing RunRecord::scan(const QString &runsDirectory)
{
    Listing out;
    for (const QString &directory : directories(runsDirectory)) {
        QJsonObject run;
        if (const QString why = readRunJson(directory, &run); !why.isEmpty()) {
            out.broken.append(BrokenRun{QFileInfo(directory).fileName(), directory, why});
            continue;
        }
        RunRecord r;
        r.openParsed(directory, run);
        out.runs.append(r.info());
    }
    std::stable_sort(out.runs.begin(), out.runs.end(),
                     [](const RunInfo &a, const RunInfo &b) { return a.createdUs > b.createdUs; });
    // Broken ones in name order, oldest first, as they were listed before.
    std::reverse(out.broken.begin(), out.broken.end());
    return out;
}

QList<RunInfo> RunRecord::list(const QString &runsDirectory)
{
    return scan(runsDirectory).runs;
}

QList<BrokenRun> RunRecord::listBroken(const QString &runsDirectory)
{
    QList<BrokenRun> out;
    const QDir dir(runsDirectory);
    for (const QString &e : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
        QJsonObject run;
        if (const QString why = readRunJson(dir.filePath(e), &run); !why.isEmpty())
            out.append(BrokenRun{e, dir.filePath(e), why});
    }
    return out;
}

QString RunRecord::resolve(const QString &runsDirectory, const QString &idOrName, QString *error)
{
    if (idOrName.isEmpty() || idOrName.contains(QLatin1Char('/'))) {
        *error = tr("invalid run \"%1\"").arg(idOrName);
        return {};
    }
    QString direct = runsDirectory + QLatin1Char('/') + idOrName;
    if (QFileInfo::exists(direct + QStringLiteral("/run.json")))
        return direct;
    for (const RunInfo &i : list(runsDirectory)) { // newest first
        if (i.name == idOrName)
            return i.directory;
    }
    *error = tr("no run with id or name \"%1\" in %2").arg(idOrName, runsDirectory);
    return {};
}

} // namespace rankdeck
