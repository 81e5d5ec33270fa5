// SPDX-License-Identifier: GPL-3.0-or-later
#include "config/syncmanifest.h"

#include "config/gitignorematcher.h"
#include "util/translation.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMutex>
#include <QMutexLocker>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QSysInfo>

#include <algorithm>
#include <functional>

namespace rankdeck {

namespace {

// A file whose size and modification time did not change is not read again within one launcher
// (the GUI launching the same project many times, every node of one launch).
QByteArray cachedSha256(const QFileInfo &fi, QString *error)
{
    static QMutex mutex;
    static QHash<QString, QByteArray> cache;
    const QString key = fi.absoluteFilePath() + QLatin1Char('|') + QString::number(fi.size()) +
                        QLatin1Char('|') + QString::number(fi.lastModified().toMSecsSinceEpoch());
    {
        QMutexLocker lock(&mutex);
        if (const auto it = cache.constFind(key); it != cache.constEnd())
            return *it;
    }
    QFile f(fi.absoluteFilePath());
    if (!f.open(QIODevice::ReadOnly)) {
        *error = tr("sync: cannot read %1: %2").arg(fi.absoluteFilePath(), f.errorString());
        return {};
    }
    QCryptographicHash hash(QCryptographicHash::Sha256);
    hash.addData(&f);
    QByteArray hex = hash.result().toHex();
    QMutexLocker lock(&mutex);
    cache.insert(key, hex);
    return hex;
}

bool runGit(const QString &dir, const QStringList &args, QByteArray *out)
{
    QProcess git;
    git.setProgram(QStringLiteral("git"));
    git.setArguments(QStringList{QStringLiteral("-C"), dir} + args);
    git.setStandardInputFile(QProcess::nullDevice());
    git.start();
    if (!git.waitForStarted(10000))
        return false; // no git: the matcher does it
    if (!git.waitForFinished(120000)) {
        git.kill();
        git.waitForFinished();
        return false;
    }
    *out = git.readAllStandardOutput();
    return git.exitStatus() == QProcess::NormalExit && git.exitCode() == 0;
}

} // namespace

qint64 SyncManifest::totalBytes() const
{
    qint64 total = 0;
    for (const SyncFile &f : m_files)
        total += f.size;
    return total;
}

bool SyncManifest::listWithGit(QStringList *paths, QString *error)
{
    QByteArray out;
    if (!runGit(m_directory, {QStringLiteral("rev-parse"), QStringLiteral("--is-inside-work-tree")},
                &out) ||
        out.trimmed() != "true")
        return false;
    if (!runGit(m_directory,
                {QStringLiteral("ls-files"), QStringLiteral("-z"), QStringLiteral("--cached"),
                 QStringLiteral("--others"), QStringLiteral("--exclude-standard")},
                &out)) {
        *error = tr("sync: git ls-files failed in %1").arg(m_directory);
        return true;
    }
    QSet<QString> seen;
    for (const QByteArray &raw : out.split('\0')) {
        if (raw.isEmpty())
            continue;
        QString path = QFile::decodeName(raw);
        // An untracked nested repository is listed as "dir/".
        if (path.endsWith(QLatin1Char('/'))) {
            path.chop(1);
            m_notes << tr("skipped %1/ (a git repository of its own)").arg(path);
            continue;
        }
        if (!seen.contains(path)) {
            seen.insert(path);
            paths->append(path);
        }
    }
    m_byGit = true;
    return true;
}

void SyncManifest::listWithMatcher(QStringList *paths)
{
    GitIgnoreMatcher matcher;
    // Depth first, so that a directory's .gitignore is added after its parents' (it wins).
    std::function<void(const QString &)> walk = [&](const QString &rel) {
        const QString abs = rel.isEmpty() ? m_directory : m_directory + QLatin1Char('/') + rel;
        QFile ignore(abs + QStringLiteral("/.gitignore"));
        if (ignore.open(QIODevice::ReadOnly))
            matcher.addRules(rel, QString::fromUtf8(ignore.readAll()));
        QDir dir(abs);
        const QFileInfoList entries = dir.entryInfoList(
            QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot, QDir::Name);
        for (const QFileInfo &fi : entries) {
            const QString path =
                rel.isEmpty() ? fi.fileName() : rel + QLatin1Char('/') + fi.fileName();
            if (fi.fileName() == QLatin1String(".git"))
                continue;
            const bool isDir = fi.isDir() && !fi.isSymLink();
            if (matcher.isIgnored(path, isDir))
                continue;
            if (isDir)
                walk(path);
            else
                paths->append(path); // files and links; scan() decides about links
        }
    };
    walk(QString());
}

SyncManifest SyncManifest::scan(const QString &directory, qint64 limitBytes, QString *error)
{
    SyncManifest m;
    const QFileInfo root(directory);
    if (!root.exists()) {
        *error = tr("sync: %1 does not exist").arg(directory);
        return {};
    }
    if (!root.isDir()) {
        *error = tr("sync: %1 is not a directory").arg(directory);
        return {};
    }
    m.m_directory = root.absoluteFilePath();
    m.m_canonical = root.canonicalFilePath();
    QStringList paths;
    QString listError;
    if (!m.listWithGit(&paths, &listError))
        m.listWithMatcher(&paths);
    if (!listError.isEmpty()) {
        *error = listError;
        return {};
    }

    // Sizes first: a directory past the limit fails before a byte is hashed.
    struct Candidate
    {
        SyncFile file;
        QFileInfo info; // the link's target for a followed link
    };
    QList<Candidate> candidates;
    for (const QString &path : std::as_const(paths)) {
        QFileInfo fi(m.m_directory + QLatin1Char('/') + path);
        if (fi.isSymLink()) {
            const QString target = fi.canonicalFilePath();
            if (target.isEmpty()) {
                m.m_notes << tr("skipped symlink %1 (its target does not exist)").arg(path);
                continue;
            }
            if (!target.startsWith(m.m_canonical + QLatin1Char('/'))) {
                m.m_notes << tr("skipped symlink %1 -> %2 (outside the directory)")
                                 .arg(path, fi.symLinkTarget());
                continue;
            }
            fi = QFileInfo(target);
            if (!fi.isFile()) {
                m.m_notes << tr("skipped symlink %1 (not to a file)").arg(path);
                continue;
            }
        } else if (fi.isDir()) {
            m.m_notes << tr("skipped %1/ (a submodule)").arg(path);
            continue;
        } else if (!fi.exists()) {
            continue; // deleted in the work tree, not yet in git's index
        } else if (!fi.isFile()) {
            m.m_notes << tr("skipped %1 (not a regular file)").arg(path);
            continue;
        }
        Candidate c;
        c.file.path = path;
        c.file.size = fi.size();
        c.file.mode = fi.permission(QFileDevice::ExeOwner) ? 0755 : 0644;
        c.info = fi;
        candidates.append(c);
    }
    qint64 total = 0;
    for (const Candidate &c : std::as_const(candidates))
        total += c.file.size;
    if (limitBytes > 0 && total > limitBytes) {
        QList<Candidate> largest = candidates;
        std::sort(largest.begin(), largest.end(),
                  [](const Candidate &a, const Candidate &b) { return a.file.size > b.file.size; });
        QStringList names;
        for (int i = 0; i < std::min<qsizetype>(5, largest.size()); ++i)
            names << QStringLiteral("%1 (%2)").arg(largest[i].file.path,
                                                   formatSize(largest[i].file.size));
        const QString count =
            candidates.size() == 1 ? tr("1 file") : tr("%1 files").arg(candidates.size());
        *error = tr("sync: %1 holds %2 in %3, more than the limit of %4; largest: %5. Leave "
                    "them out with .gitignore, or raise the limit with --sync-limit SIZE")
                     .arg(m.m_directory, formatSize(total), count, formatSize(limitBytes),
                          names.join(QStringLiteral(", ")));
        return {};
    }
    for (Candidate &c : candidates) {
        c.file.sha256 = cachedSha256(c.info, error);
        if (c.file.sha256.isEmpty())
            return {};
        m.m_files.append(c.file);
    }
    return m;
}

SyncManifest SyncManifest::scanShared(const QString &directory, qint64 limitBytes,
                                      const QString &token, QString *error)
{
    struct Result
    {
        SyncManifest manifest;
        QString error;
    };
    static QMutex mutex;
    static QList<QPair<QString, Result>> recent; // a few launches, newest last
    const QString key = token + QLatin1Char('|') + QString::number(limitBytes) + QLatin1Char('|') +
                        QFileInfo(directory).absoluteFilePath();
    QMutexLocker lock(&mutex);
    for (const auto &r : std::as_const(recent)) {
        if (r.first == key) {
            *error = r.second.error;
            return r.second.manifest;
        }
    }
    Result r;
    r.manifest = scan(directory, limitBytes, &r.error);
    recent.append({key, r});
    if (recent.size() > 4)
        recent.removeFirst();
    *error = r.error;
    return r.manifest;
}

void SyncManifest::setSha256(const QString &path, const QByteArray &sha256)
{
    for (SyncFile &f : m_files) {
        if (f.path == path)
            f.sha256 = sha256;
    }
}

QString SyncManifest::remoteName() const
{
    QString name = QFileInfo(m_directory).fileName();
    static const QRegularExpression unsafe(QStringLiteral("[^A-Za-z0-9._-]"));
    name.replace(unsafe, QStringLiteral("_"));
    if (name.isEmpty() || name.startsWith(QLatin1Char('.')))
        name.prepend(QStringLiteral("dir"));
    const QByteArray id =
        QCryptographicHash::hash(
            (QSysInfo::machineHostName() + QLatin1Char(':') + m_directory).toUtf8(),
            QCryptographicHash::Sha256)
            .toHex()
            .left(12);
    return name.left(64) + QLatin1Char('-') + QString::fromLatin1(id);
}

QByteArray SyncManifest::toJson() const
{
    QJsonArray files;
    for (const SyncFile &f : m_files) {
        QJsonObject o;
        o[QStringLiteral("path")] = f.path;
        o[QStringLiteral("size")] = f.size;
        o[QStringLiteral("mode")] = f.mode;
        o[QStringLiteral("sha256")] = QString::fromLatin1(f.sha256);
        files.append(o);
    }
    QJsonObject root;
    root[QStringLiteral("version")] = 1;
    root[QStringLiteral("source")] = QSysInfo::machineHostName() + QLatin1Char(':') + m_directory;
    root[QStringLiteral("files")] = files;
    return QJsonDocument(root).toJson(QJsonDocument::Compact);
}

bool SyncManifest::parseJson(const QByteArray &json, QHash<QString, SyncFile> *files,
                             QString *error)
{
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
    if (!doc.isObject() || doc.object().value(QStringLiteral("version")).toInt() != 1) {
        *error = pe.error != QJsonParseError::NoError ? pe.errorString()
                                                      : tr("not a version 1 sync manifest");
        return false;
    }
    files->clear();
    for (const QJsonArray items = doc.object().value(QStringLiteral("files")).toArray();
         const auto &v : items) {
        const QJsonObject o = v.toObject();
        SyncFile f;
        f.path = o.value(QStringLiteral("path")).toString();
        f.size = o.value(QStringLiteral("size")).toInteger();
        f.mode = o.value(QStringLiteral("mode")).toInt(0644);
        f.sha256 = o.value(QStringLiteral("sha256")).toString().toLatin1();
        if (!f.path.isEmpty())
            files->insert(f.path, f);
    }
    return true;
}

bool SyncManifest::parseSize(const QString &text, qint64 *bytes)
{
    static const QRegularExpression re(
        QStringLiteral("^\\s*(\\d+(?:\\.\\d+)?)\\s*([kKmMgGtT]?)(?:i?[bB])?\\s*$"));
    const QRegularExpressionMatch m = re.match(text);
    if (!m.hasMatch())
        return false;
    bool ok = false;
    const double number = m.captured(1).toDouble(&ok);
    if (!ok)
        return false;
    static const QString units = QStringLiteral("kmgt");
    const int power = m.captured(2).isEmpty() ? 0 : int(units.indexOf(m.captured(2).toLower())) + 1;
    const double value = number * double(qint64(1) << (10 * power));
    if (value > 9.0e18)
        return false;
    *bytes = qint64(value);
    return true;
}

QString SyncManifest::formatSize(qint64 bytes)
{
    if (bytes == 1)
        return tr("1 byte");
    if (bytes < 1024)
        return tr("%1 bytes").arg(bytes);
    const char *units[] = {"KiB", "MiB", "GiB", "TiB"};
    double v = double(bytes) / 1024;
    int u = 0;
    while (v >= 1024 && u < 3) {
        v /= 1024;
        ++u;
    }
    return QStringLiteral("%1 %2").arg(QString::number(v, 'f', 1), QLatin1String(units[u]));
}

} // namespace rankdeck
