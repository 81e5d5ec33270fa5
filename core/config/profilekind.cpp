// SPDX-License-Identifier: GPL-3.0-or-later
#include "config/profilekind.h"

#include <QJsonArray>
#include <QMutex>
#include <QMutexLocker>

namespace rankdeck {

ProfileKind::~ProfileKind() = default;

QList<ProfileError> ProfileKind::validateSection(const QJsonObject &, const QString &) const
{
    return {};
}

QList<ProfileNode> ProfileKind::placeholderNodes(const QJsonObject &) const
{
    return {};
}

void ProfileKind::setRanksPerNode(QJsonObject *, int) const {}

QString ProfileKind::nodesProblem(bool, bool) const
{
    return {};
}

bool ProfileKind::applyOptions(const QCommandLineParser &, Profile *, QString *) const
{
    return true;
}

QJsonObject ProfileKind::completeSection(const QJsonObject &section) const
{
    QJsonObject out;
    for (const ProfileField &f : sectionFields()) {
        const QJsonValue v = section.value(f.key);
        switch (f.type) {
        case ProfileField::String:
            out[f.key] = v.isString() ? v.toString() : f.defaultValue.toString();
            break;
        case ProfileField::Int:
            out[f.key] = v.isDouble() ? v.toInt(f.defaultValue.toInt()) : f.defaultValue.toInt();
            break;
        case ProfileField::StringList: {
            QJsonArray list;
            const QJsonArray given = v.isArray() ? v.toArray() : f.defaultValue.toArray();
            for (const auto &item : given)
                list.append(item.toString());
            out[f.key] = list;
            break;
        }
        }
    }
    return out;
}

namespace {

struct Registry
{
    QMutex mutex;
    std::vector<std::unique_ptr<ProfileKind>> kinds;
};

Registry &registry()
{
    // Never destroyed: kinds are handed out as plain pointers for the program's whole life.
    static Registry *r = [] {
        auto *made = new Registry;
        made->kinds = builtinProfileKinds();
        return made;
    }();
    return *r;
}

} // namespace

bool ProfileKinds::add(std::unique_ptr<ProfileKind> kind)
{
    Registry &r = registry();
    const QMutexLocker lock(&r.mutex);
    for (const auto &k : r.kinds)
        if (k->name() == kind->name())
            return false;
    r.kinds.push_back(std::move(kind));
    return true;
}

const ProfileKind *ProfileKinds::find(const QString &name)
{
    Registry &r = registry();
    const QMutexLocker lock(&r.mutex);
    for (const auto &k : r.kinds)
        if (k->name() == name)
            return k.get();
    return nullptr;
}

QStringList ProfileKinds::names()
{
    Registry &r = registry();
    const QMutexLocker lock(&r.mutex);
    QStringList out;
    for (const auto &k : r.kinds)
        out << k->name();
    return out;
}

QString ProfileKinds::list(bool quoted)
{
    QStringList words = names();
    if (quoted)
        for (QString &w : words)
            w = QLatin1Char('"') + w + QLatin1Char('"');
    if (words.size() < 2)
        return words.join(QString());
    const QString last = words.takeLast();
    return words.join(QStringLiteral(", ")) + QStringLiteral(" or ") + last;
}

} // namespace rankdeck
