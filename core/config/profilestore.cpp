// SPDX-License-Identifier: GPL-3.0-or-later
// Longer than the house's ~600 lines: a profile's TOML is read, validated and written here side
// by side, so that a field's name, its check and its output change together. A kind's own table
// ([slurm]) is read and written by the fields its ProfileKind declares and checked by the kind
// (core/transport/<kind>/).
#include "config/profilestore.h"

#include "config/metricpattern.h"
#include "config/profilekind.h"
#include "util/atomicfile.h"
#include "util/printabletext.h"
#include "util/translation.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QMap>
#include <QRegularExpression>
#include <QStandardPaths>

#include <algorithm>
#include <sstream>
#include <toml++/toml.h>

namespace rankdeck {

namespace {

QString qs(std::string_view s)
{
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

int lineOf(const toml::node &node)
{
    return int(node.source().begin.line);
}

// Walks one parsed document, collecting every problem instead of stopping at the first so that
// a user fixes a file in one go.
class Reader
{
public:
    Reader(QString file, QList<ProfileError> *errors) : m_file(std::move(file)), m_errors(errors) {}

    void error(int line, const QString &field, const QString &message)
    {
        m_errors->append(ProfileError{m_file, line, field, message});
    }

    bool readString(const toml::node &node, const QString &field, QString *out)
    {
        if (const auto *s = node.as_string()) {
            *out = qs(s->get());
            return true;
        }
        error(lineOf(node), field, tr("expected a string"));
        return false;
    }

    bool readBool(const toml::node &node, const QString &field, bool *out)
    {
        if (const auto *b = node.as_boolean()) {
            *out = b->get();
            return true;
        }
        error(lineOf(node), field, tr("expected true or false"));
        return false;
    }

    bool readInt(const toml::node &node, const QString &field, int min, int max, int *out)
    {
        const auto *i = node.as_integer();
        if (!i) {
            error(lineOf(node), field, tr("expected an integer"));
            return false;
        }
        const int64_t v = i->get();
        if (v < min || v > max) {
            error(lineOf(node), field,
                  tr("%1 is out of range (%2 to %3)").arg(v).arg(min).arg(max));
            return false;
        }
        *out = int(v);
        return true;
    }

    void unknown(const toml::key &key, const QString &field)
    {
        error(int(key.source().begin.line), field, tr("unknown field"));
    }

    void readNode(const toml::table &t, int index, ProfileNode *n)
    {
        const QString prefix = QStringLiteral("nodes[%1].").arg(index);
        for (auto &&[key, value] : t) {
            const QString k = qs(key.str());
            const QString field = prefix + k;
            if (k == QLatin1String("host"))
                readString(value, field, &n->host);
            else if (k == QLatin1String("port"))
                readInt(value, field, 1, 65535, &n->port);
            else if (k == QLatin1String("user"))
                readString(value, field, &n->user);
            else if (k == QLatin1String("identity_file"))
                readString(value, field, &n->identityFile);
            else if (k == QLatin1String("ranks_per_node"))
                readInt(value, field, 1, 4096, &n->ranksPerNode);
            else if (k == QLatin1String("gpus_per_node"))
                readInt(value, field, 0, 4096, &n->gpusPerNode);
            else
                unknown(key, field);
        }
        if (n->host.trimmed().isEmpty()) {
            error(lineOf(t), prefix + QStringLiteral("host"),
                  tr("missing (every node needs a host)"));
        } else if (const QString why = ProfileStore::hostProblem(n->host); !why.isEmpty()) {
            const auto *host = t.get("host");
            error(host ? lineOf(*host) : lineOf(t), prefix + QStringLiteral("host"),
                  tr("%1 (profile \"%2\")").arg(why, QFileInfo(m_file).completeBaseName()));
        }
        if (const QString why = ProfileStore::userProblem(n->user); !why.isEmpty()) {
            const auto *user = t.get("user");
            error(user ? lineOf(*user) : lineOf(t), prefix + QStringLiteral("user"),
                  tr("%1 (profile \"%2\")").arg(why, QFileInfo(m_file).completeBaseName()));
        }
    }

    // A kind's table ([slurm]) by the fields it declares.
    void readSection(const ProfileKind &kind, const toml::table &t, QJsonObject *out)
    {
        const QList<ProfileField> fields = kind.sectionFields();
        for (auto &&[key, value] : t) {
            const QString k = qs(key.str());
            const QString field = kind.name() + QLatin1Char('.') + k;
            const auto f = std::find_if(fields.cbegin(), fields.cend(),
                                        [&](const ProfileField &pf) { return pf.key == k; });
            if (f == fields.cend()) {
                unknown(key, field);
                continue;
            }
            if (f->type == ProfileField::String) {
                QString v;
                if (readString(value, field, &v))
                    (*out)[k] = v;
            } else if (f->type == ProfileField::Int) {
                int v = 0;
                if (readInt(value, field, f->min, f->max, &v))
                    (*out)[k] = v;
            } else {
                const auto *a = value.as_array();
                if (!a) {
                    error(lineOf(value), field, tr("expected a list of strings"));
                    continue;
                }
                QJsonArray list;
                for (const toml::node &item : *a) {
                    QString v;
                    if (readString(item, field, &v))
                        list.append(v);
                }
                (*out)[k] = list;
            }
        }
    }

    void read(const toml::table &root, Profile *p)
    {
        int nodesLine = 0;
        // Every kind's table that the file has, by kind; the profile keeps its own kind's.
        QMap<QString, QJsonObject> sections;
        bool sawVersion = false;
        for (auto &&[key, value] : root) {
            const QString k = qs(key.str());
            if (k == QLatin1String("schema_version")) {
                sawVersion = true;
                if (readInt(value, k, 1, 1 << 20, &p->schemaVersion) &&
                    p->schemaVersion > ProfileStore::kSchemaVersion) {
                    error(lineOf(value), k,
                          tr("version %1 was written by a newer RankDeck (this one reads %2)")
                              .arg(p->schemaVersion)
                              .arg(ProfileStore::kSchemaVersion));
                }
            } else if (k == QLatin1String("name")) {
                readString(value, k, &p->name);
            } else if (k == QLatin1String("transport")) {
                if (readString(value, k, &p->transport) && !ProfileKinds::find(p->transport)) {
                    error(lineOf(value), k,
                          tr("\"%1\" is not a transport (use %2)")
                              .arg(p->transport, ProfileKinds::list(true)));
                }
            } else if (k == QLatin1String("rendezvous_address")) {
                readString(value, k, &p->rendezvousAddress);
            } else if (k == QLatin1String("worker_directory")) {
                readString(value, k, &p->workerDirectory);
            } else if (k == QLatin1String("libtorch_path")) {
                readString(value, k, &p->libtorchPath);
            } else if (k == QLatin1String("warm_python")) {
                readBool(value, k, &p->warmPython);
            } else if (k == QLatin1String("flight_recorder")) {
                readBool(value, k, &p->flightRecorder);
            } else if (k == QLatin1String("backend")) {
                if (readString(value, k, &p->backend) && p->backend != QLatin1String("auto") &&
                    p->backend != QLatin1String("nccl") && p->backend != QLatin1String("gloo")) {
                    error(lineOf(value), k,
                          tr(R"("%1" is not a backend (use "auto", "nccl" or "gloo"))")
                              .arg(p->backend));
                }
            } else if (k == QLatin1String("environment")) {
                const auto *t = value.as_table();
                if (!t) {
                    error(lineOf(value), k, tr("expected a table of NAME = \"value\""));
                    continue;
                }
                for (auto &&[ek, ev] : *t) {
                    const QString name = qs(ek.str());
                    const QString field = QStringLiteral("environment.") + name;
                    static const QRegularExpression valid(
                        QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*\\z"));
                    if (!valid.match(name).hasMatch()) {
                        error(int(ek.source().begin.line), field,
                              tr("not a valid environment variable name"));
                        continue;
                    }
                    QString v;
                    if (readString(ev, field, &v))
                        p->environment.insert(name, v);
                }
            } else if (k == QLatin1String("metrics")) {
                const auto *a = value.as_array();
                if (!a) {
                    error(lineOf(value), k, tr("expected a list of \"NAME=REGEX\" strings"));
                    continue;
                }
                for (const toml::node &item : *a) {
                    QString spec;
                    if (!readString(item, k, &spec))
                        continue;
                    // The same rule as `launch --metric`.
                    MetricPattern pattern;
                    QString why;
                    if (parseMetricPattern(spec, &pattern, &why))
                        p->metricPatterns << spec;
                    else
                        error(lineOf(item), k, why);
                }
            } else if (k == QLatin1String("timeouts")) {
                const auto *t = value.as_table();
                if (!t) {
                    error(lineOf(value), k, tr("expected a table"));
                    continue;
                }
                for (auto &&[tk, tv] : *t) {
                    const QString name = qs(tk.str());
                    const QString field = QStringLiteral("timeouts.") + name;
                    if (name == QLatin1String("connect"))
                        readInt(tv, field, 1, 86400, &p->connectTimeoutSec);
                    else if (name == QLatin1String("rendezvous"))
                        readInt(tv, field, 1, 86400, &p->rendezvousTimeoutSec);
                    else if (name == QLatin1String("heartbeat"))
                        readInt(tv, field, 1, 86400, &p->heartbeatTimeoutSec);
                    else if (name == QLatin1String("collective"))
                        readInt(tv, field, 1, 86400 * 7, &p->collectiveTimeoutSec);
                    else if (name == QLatin1String("orphan_grace"))
                        readInt(tv, field, 1, 86400, &p->orphanGraceSec);
                    else
                        unknown(tk, field);
                }
            } else if (k == QLatin1String("nodes")) {
                const auto *arr = value.as_array();
                if (!arr) {
                    error(lineOf(value), k, tr("expected [[nodes]] tables"));
                    continue;
                }
                nodesLine = std::max(1, lineOf(value));
                int index = 0;
                for (const toml::node &item : *arr) {
                    const auto *t = item.as_table();
                    if (!t) {
                        error(lineOf(item), QStringLiteral("nodes[%1]").arg(index),
                              tr("expected a table"));
                    } else {
                        ProfileNode n;
                        readNode(*t, index, &n);
                        p->nodes.append(n);
                    }
                    ++index;
                }
            } else if (const ProfileKind *kind = ProfileKinds::find(k);
                       kind && !kind->sectionFields().isEmpty()) {
                if (const auto *t = value.as_table())
                    readSection(*kind, *t, &sections[k]);
                else
                    error(lineOf(value), k, tr("expected a [%1] table").arg(k));
            } else {
                unknown(key, k);
            }
        }
        if (!sawVersion)
            error(1, QStringLiteral("schema_version"),
                  tr("missing (add schema_version = %1)").arg(ProfileStore::kSchemaVersion));
        const ProfileKind *kind = ProfileKinds::find(p->transport);
        if (kind && !kind->sectionFields().isEmpty())
            p->section = kind->completeSection(sections.value(p->transport));
        if (kind && kind->choosesNodes()) {
            // The kind picks the nodes (Slurm); its table says how many.
            if (!p->nodes.isEmpty())
                error(nodesLine, QStringLiteral("nodes"), kind->nodesProblem(true, false));
            p->syncNodes();
        } else if (p->nodes.isEmpty()) {
            error(0, QStringLiteral("nodes"), tr("the profile has no [[nodes]]"));
        }
    }

private:
    QString m_file;
    QList<ProfileError> *m_errors;
};

} // namespace

ProfileStore::ProfileStore(const QString &directory)
    : m_directory(directory.isEmpty() ? defaultDirectory() : directory)
{}

QString ProfileStore::defaultDirectory()
{
    QString base = qEnvironmentVariable("XDG_CONFIG_HOME");
    if (base.isEmpty())
        base = QDir::homePath() + QStringLiteral("/.config");
    return base + QStringLiteral("/rankdeck/profiles");
}

QString ProfileStore::filePath(const QString &name) const
{
    return m_directory + QLatin1Char('/') + name + QStringLiteral(".toml");
}

bool ProfileStore::isValidName(const QString &name)
{
    static const QRegularExpression re(QStringLiteral("^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}\\z"));
    return re.match(name).hasMatch();
}

QStringList ProfileStore::names() const
{
    QStringList out;
    const QStringList files =
        QDir(m_directory).entryList({QStringLiteral("*.toml")}, QDir::Files, QDir::Name);
    for (const QString &f : files) {
        const QString n = f.chopped(5);
        if (isValidName(n))
            out.append(n);
    }
    if (!out.contains(Profile::builtinLocalName()))
        out.prepend(Profile::builtinLocalName());
    return out;
}

bool ProfileStore::exists(const QString &name) const
{
    return name == Profile::builtinLocalName() || QFileInfo::exists(filePath(name));
}

bool ProfileStore::parse(const QString &text, const QString &fileName, Profile *profile,
                         QList<ProfileError> *errors)
{
    const int before = errors->size();
    const QByteArray utf8 = text.toUtf8();
    Profile p;
    p.nodes.clear();
    try {
        const toml::table root = toml::parse(
            std::string_view(utf8.constData(), size_t(utf8.size())), fileName.toStdString());
        Reader reader(fileName, errors);
        reader.read(root, &p);
    } catch (const toml::parse_error &e) {
        errors->append(
            ProfileError{fileName, int(e.source().begin.line), QString(), qs(e.description())});
        return false;
    }
    if (p.name.isEmpty())
        p.name = QFileInfo(fileName).completeBaseName();
    if (errors->size() != before)
        return false;
    *profile = p;
    return true;
}

namespace {

// Why text that ends up on an ssh command line or in a libssh option cannot be what it claims
// to be; empty when it can. A leading '-' would be read as an option, ';', '$', '`', spaces and
// newlines never occur in a host or user name and only break the wrapper or the message.
QString namePartProblem(const QString &text, const QString &what, const QString &allowed)
{
    const QString shown = printableLabel(text, 80);
    if (text.startsWith(QLatin1Char('-')))
        return tr("\"%1\" is not a %2: it starts with '-' (ssh would read it as an option)")
            .arg(shown, what);
    for (const QChar c : text) {
        if (c.isLetterOrNumber() || allowed.contains(c))
            continue;
        const QString name =
            c.unicode() < 0x20 || c.unicode() == 0x7f
                ? tr("a control character (U+%1)").arg(c.unicode(), 4, 16, QLatin1Char('0'))
            : c.isSpace() ? tr("a space")
                          : QStringLiteral("'%1'").arg(c);
        return tr("\"%1\" is not a %2: it contains %3").arg(shown, what, name);
    }
    return {};
}

// The first control character of `text` (C0, DEL or C1), named; empty when there is none. A
// newline in a field that ends up in a batch script line (#SBATCH --partition=…) or a
// command would start a line of the user's shell there (issue 29).
QString controlCharacter(const QString &text)
{
    for (const QChar c : text) {
        const ushort u = c.unicode();
        if (u < 0x20 || u == 0x7f || (u >= 0x80 && u <= 0x9f))
            return tr("a control character (U+%1)").arg(u, 4, 16, QLatin1Char('0'));
    }
    return {};
}

} // namespace

QString ProfileStore::hostProblem(const QString &host)
{
    // Names, IPv4, IPv6 (bracketed or not, with a %zone) and ~/.ssh/config aliases.
    return namePartProblem(host, tr("host name or address"), QStringLiteral(".-_:[]%"));
}

QString ProfileStore::userProblem(const QString &user)
{
    if (user.isEmpty())
        return {};
    return namePartProblem(user, tr("user name"), QStringLiteral(".-_@"));
}

QList<ProfileError> ProfileStore::validate(const Profile &p, const QString &fileName)
{
    QList<ProfileError> errors;
    auto add = [&](const QString &field, const QString &msg) {
        errors.append(ProfileError{fileName, 0, field, msg});
    };
    const ProfileKind *kind = ProfileKinds::find(p.transport);
    const bool kindChoosesNodes = kind && kind->choosesNodes();
    if (!kind)
        add(QStringLiteral("transport"),
            tr("\"%1\" is not a transport (use %2)")
                .arg(printableLabel(p.transport, 80), ProfileKinds::list(true)));
    else
        errors.append(kind->validateSection(p.section, fileName));
    if (p.backend != QLatin1String("auto") && p.backend != QLatin1String("nccl") &&
        p.backend != QLatin1String("gloo"))
        add(QStringLiteral("backend"), tr(R"("%1" is not a backend (use "auto", "nccl" or "gloo"))")
                                           .arg(printableLabel(p.backend, 80)));
    if (p.nodes.isEmpty() && !kindChoosesNodes)
        add(QStringLiteral("nodes"), tr("the profile has no nodes"));
    if (const QString why =
            p.rendezvousAddress.isEmpty() ? QString() : hostProblem(p.rendezvousAddress);
        !why.isEmpty())
        add(QStringLiteral("rendezvous_address"), tr("%1 (profile \"%2\")").arg(why, p.name));
    // A Slurm profile's nodes are placeholders made from its [slurm] table, checked above.
    for (int i = 0; i < (kindChoosesNodes ? 0 : p.nodes.size()); ++i) {
        const ProfileNode &n = p.nodes[i];
        const QString prefix = QStringLiteral("nodes[%1].").arg(i);
        if (n.host.trimmed().isEmpty())
            add(prefix + QStringLiteral("host"), tr("missing (every node needs a host)"));
        else if (const QString why = hostProblem(n.host); !why.isEmpty())
            add(prefix + QStringLiteral("host"), tr("%1 (profile \"%2\")").arg(why, p.name));
        if (const QString why = userProblem(n.user); !why.isEmpty())
            add(prefix + QStringLiteral("user"), tr("%1 (profile \"%2\")").arg(why, p.name));
        if (n.port < 1 || n.port > 65535)
            add(prefix + QStringLiteral("port"), tr("%1 is out of range (1 to 65535)").arg(n.port));
        if (n.ranksPerNode < 1)
            add(prefix + QStringLiteral("ranks_per_node"), tr("must be at least 1"));
        if (n.gpusPerNode < 0)
            add(prefix + QStringLiteral("gpus_per_node"), tr("must not be negative"));
    }
    if (p.connectTimeoutSec < 1)
        add(QStringLiteral("timeouts.connect"), tr("must be at least 1 second"));
    if (p.rendezvousTimeoutSec < 1)
        add(QStringLiteral("timeouts.rendezvous"), tr("must be at least 1 second"));
    if (p.heartbeatTimeoutSec < 1)
        add(QStringLiteral("timeouts.heartbeat"), tr("must be at least 1 second"));
    if (p.collectiveTimeoutSec < 1)
        add(QStringLiteral("timeouts.collective"), tr("must be at least 1 second"));
    if (p.orphanGraceSec < 1)
        add(QStringLiteral("timeouts.orphan_grace"), tr("must be at least 1 second"));
    // No field may hold a control character; those checked above by their own rules already say
    // so in their own words. The environment's values are the exception: they are the program's
    // data, passed on exactly (quoted as one word wherever a shell reads them), and a newline in
    // one is the user's to choose (roundTrip's "hostile env").
    QList<std::pair<QString, QString>> fields{
        {QStringLiteral("name"), p.name},
        {QStringLiteral("transport"), p.transport},
        {QStringLiteral("backend"), p.backend},
        {QStringLiteral("rendezvous_address"), p.rendezvousAddress},
        {QStringLiteral("worker_directory"), p.workerDirectory},
        {QStringLiteral("libtorch_path"), p.libtorchPath}};
    for (const QString &pattern : p.metricPatterns)
        fields.append({QStringLiteral("metric_patterns"), pattern});
    for (int i = 0; i < (kindChoosesNodes ? 0 : p.nodes.size()); ++i) {
        const QString prefix = QStringLiteral("nodes[%1].").arg(i);
        fields.append({prefix + QStringLiteral("host"), p.nodes[i].host});
        fields.append({prefix + QStringLiteral("user"), p.nodes[i].user});
        fields.append({prefix + QStringLiteral("identity_file"), p.nodes[i].identityFile});
    }
    if (kind) {
        // The kind's text fields, in the order it declares them.
        const QJsonObject section = kind->completeSection(p.section);
        for (const ProfileField &f : kind->sectionFields()) {
            const QString field = kind->name() + QLatin1Char('.') + f.key;
            if (f.type == ProfileField::String) {
                fields.append({field, section.value(f.key).toString()});
            } else if (f.type == ProfileField::StringList) {
                const QJsonArray values = section.value(f.key).toArray();
                for (const auto &v : values)
                    fields.append({field, v.toString()});
            }
        }
    }
    for (const std::pair<QString, QString> &f : std::as_const(fields)) {
        const QString what = controlCharacter(f.second);
        if (what.isEmpty())
            continue;
        // (Not a structured binding: clang 14, the sanitizer build's, cannot capture one.)
        const bool said = std::any_of(errors.cbegin(), errors.cend(),
                                      [&](const ProfileError &e) { return e.field == f.first; });
        if (!said)
            add(f.first, tr(R"("%1" contains %2 (profile "%3"))")
                             .arg(printableLabel(f.second, 80), what, printableLabel(p.name, 64)));
    }
    return errors;
}

bool ProfileStore::load(const QString &name, Profile *profile, QList<ProfileError> *errors) const
{
    const QString path = filePath(name);
    if (!isValidName(name)) {
        errors->append(ProfileError{
            path, 0, QString(),
            tr("\"%1\" is not a valid profile name (letters, digits, '.', '_', '-')").arg(name)});
        return false;
    }
    QFile f(path);
    if (!f.exists()) {
        if (name == Profile::builtinLocalName()) {
            *profile = Profile::builtinLocal();
            return true;
        }
        errors->append(ProfileError{path, 0, QString(), tr("no such profile")});
        return false;
    }
    if (!f.open(QIODevice::ReadOnly)) {
        errors->append(
            ProfileError{path, 0, QString(), tr("cannot read: %1").arg(f.errorString())});
        return false;
    }
    // A profile is a few hundred bytes; a bigger file is a mistake (or not a profile), and
    // cutting it could leave valid TOML with nodes missing.
    const QByteArray data = f.read(kMaxFileBytes + 1);
    if (data.size() > kMaxFileBytes) {
        errors->append(ProfileError{
            path, 0, QString(),
            tr("the file is larger than %1 MiB, the limit for a profile; nothing was read")
                .arg(kMaxFileBytes / (qint64(1024) * 1024))});
        return false;
    }
    Profile p;
    if (!parse(QString::fromUtf8(data), path, &p, errors))
        return false;
    p.name = name;
    const QList<ProfileError> more = validate(p, path);
    if (!more.isEmpty()) {
        errors->append(more);
        return false;
    }
    *profile = p;
    return true;
}

QString ProfileStore::serialize(const Profile &p)
{
    auto s = [](const QString &v) { return v.toStdString(); };
    toml::table root;
    root.insert("schema_version", int64_t(kSchemaVersion));
    root.insert("name", s(p.name));
    root.insert("transport", s(p.transport));
    root.insert("backend", s(p.backend));
    if (!p.rendezvousAddress.isEmpty())
        root.insert("rendezvous_address", s(p.rendezvousAddress));
    if (!p.workerDirectory.isEmpty())
        root.insert("worker_directory", s(p.workerDirectory));
    if (p.warmPython)
        root.insert("warm_python", true);
    if (!p.flightRecorder)
        root.insert("flight_recorder", false);
    if (!p.libtorchPath.isEmpty())
        root.insert("libtorch_path", s(p.libtorchPath));
    toml::table timeouts;
    timeouts.insert("connect", int64_t(p.connectTimeoutSec));
    timeouts.insert("rendezvous", int64_t(p.rendezvousTimeoutSec));
    timeouts.insert("heartbeat", int64_t(p.heartbeatTimeoutSec));
    timeouts.insert("collective", int64_t(p.collectiveTimeoutSec));
    timeouts.insert("orphan_grace", int64_t(p.orphanGraceSec));
    root.insert("timeouts", std::move(timeouts));
    toml::table env;
    for (auto it = p.environment.cbegin(); it != p.environment.cend(); ++it)
        env.insert(s(it.key()), s(it.value()));
    root.insert("environment", std::move(env));
    if (!p.metricPatterns.isEmpty()) {
        toml::array metrics;
        for (const QString &spec : p.metricPatterns)
            metrics.push_back(s(spec));
        root.insert("metrics", std::move(metrics));
    }
    const ProfileKind *kind = ProfileKinds::find(p.transport);
    if (kind && !kind->sectionFields().isEmpty()) {
        const QJsonObject section = kind->completeSection(p.section);
        const QJsonObject defaults = kind->completeSection(QJsonObject());
        toml::table t;
        for (const ProfileField &f : kind->sectionFields()) {
            const QJsonValue v = section.value(f.key);
            if (!f.alwaysWritten && v == defaults.value(f.key))
                continue;
            if (f.type == ProfileField::String) {
                t.insert(s(f.key), s(v.toString()));
            } else if (f.type == ProfileField::Int) {
                t.insert(s(f.key), int64_t(v.toInt()));
            } else {
                toml::array list;
                const QJsonArray items = v.toArray();
                for (const auto &item : items)
                    list.push_back(s(item.toString()));
                t.insert(s(f.key), std::move(list));
            }
        }
        root.insert(s(kind->name()), std::move(t));
    }
    toml::array nodes;
    // A slurm profile's nodes are placeholders for what Slurm allocates (not written).
    const bool kindChoosesNodes = kind && kind->choosesNodes();
    for (const ProfileNode &n : kindChoosesNodes ? QList<ProfileNode>() : p.nodes) {
        toml::table t;
        t.insert("host", s(n.host));
        t.insert("port", int64_t(n.port));
        if (!n.user.isEmpty())
            t.insert("user", s(n.user));
        if (!n.identityFile.isEmpty())
            t.insert("identity_file", s(n.identityFile));
        t.insert("ranks_per_node", int64_t(n.ranksPerNode));
        t.insert("gpus_per_node", int64_t(n.gpusPerNode));
        nodes.push_back(std::move(t));
    }
    if (!kindChoosesNodes)
        root.insert("nodes", std::move(nodes));
    std::ostringstream out;
    out << "# RankDeck cluster profile (see docs). Edit freely; unknown fields are reported.\n";
    out << root << "\n";
    return QString::fromStdString(out.str());
}

bool ProfileStore::save(const Profile &profile, bool overwrite, QString *error) const
{
    if (!isValidName(profile.name)) {
        *error = tr("\"%1\" is not a valid profile name (letters, digits, '.', '_', '-')")
                     .arg(profile.name);
        return false;
    }
    const QString path = filePath(profile.name);
    const QList<ProfileError> problems = validate(profile, path);
    if (!problems.isEmpty()) {
        *error = problems.first().toString();
        return false;
    }
    if (QFileInfo::exists(path)) {
        QFile f(path);
        Profile existing;
        QList<ProfileError> errs;
        if (!f.open(QIODevice::ReadOnly) ||
            !parse(QString::fromUtf8(f.readAll()), path, &existing, &errs)) {
            *error = tr("%1 exists and cannot be read (%2); fix or remove it first, it was left "
                        "untouched")
                         .arg(path, errs.isEmpty() ? f.errorString() : errs.first().toString());
            return false;
        }
        if (!overwrite) {
            *error = tr("profile \"%1\" already exists (%2)").arg(profile.name, path);
            return false;
        }
    }
    if (!QDir().mkpath(m_directory)) {
        *error = tr("cannot create %1").arg(m_directory);
        return false;
    }
    return AtomicFile::writeFile(path, serialize(profile).toUtf8(), error);
}

bool ProfileStore::remove(const QString &name, QString *error) const
{
    const QString path = filePath(name);
    if (!isValidName(name) || !QFileInfo::exists(path)) {
        *error = name == Profile::builtinLocalName()
                     ? tr("the built-in \"local\" profile has no file to remove")
                     : tr("no such profile: %1").arg(name);
        return false;
    }
    if (!QFile::remove(path)) {
        *error = tr("cannot remove %1").arg(path);
        return false;
    }
    return true;
}

} // namespace rankdeck
