// SPDX-License-Identifier: GPL-3.0-or-later
//
// A transport kind's part of a cluster profile: its own table in the file ([slurm]) with each
// field's type, range and default, the checks of its values, how it treats [[nodes]], and its
// `profiles add` flags. The store and the CLI ask the kind by the profile's `transport`, so that
// a kind lives in its own folder (core/transport/<kind>/) and config/ names none of them.
// transport/transportkind.h adds what a kind runs (its Transport); ProfileKinds holds them all.
//
// Not Profile itself (only a forward declaration): profile.cpp asks the kinds, so this header
// must not include profile.h (scripts/check-layout.py: files of a folder include one way).
#pragma once

#include "config/profileerror.h"
#include "config/profilenode.h"

#include <QCommandLineOption>
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>
#include <QStringList>

#include <memory>
#include <vector>

class QCommandLineParser;

namespace rankdeck {

struct Profile;

// One field of a kind's table: its key (in TOML and JSON), type, range and default.
struct ProfileField
{
    enum Type
    {
        String,
        Int,
        StringList
    };
    QString key;
    Type type = String;
    QJsonValue defaultValue; // null: "", 0 or []
    int min = 0, max = 0;    // Int only
    // Written to the file even when it holds its default, so that the file shows what the
    // profile asks for (slurm's partition, nodes, …); else only when it differs.
    bool alwaysWritten = false;
};

class ProfileKind
{
public:
    virtual ~ProfileKind();

    // The profile's `transport` value, and the name of its table ("slurm").
    virtual QString name() const = 0;
    // What the profile editor's transport list shows ("Slurm (sbatch)").
    virtual QString displayName() const = 0;

    // Its table's fields; none: the kind has no table (a file's [name] is then unknown).
    virtual QList<ProfileField> sectionFields() const { return {}; }
    // What type and range cannot say (a time limit's form, an option RankDeck sets itself);
    // each error names its field as in the file ("slurm.time").
    virtual QList<ProfileError> validateSection(const QJsonObject &section,
                                                const QString &fileName) const;
    // The table as a Profile holds it: every field, of its type, the default where missing,
    // nothing else (so that two equal profiles compare equal).
    QJsonObject completeSection(const QJsonObject &section) const;

    // The kind picks the nodes itself (Slurm): the file has no [[nodes]], and Profile::nodes are
    // placeholders made from the table (placeholderNodes()), so that ranks count as for any kind.
    virtual bool choosesNodes() const { return false; }
    virtual QList<ProfileNode> placeholderNodes(const QJsonObject &section) const;
    // Ranks per node set on a profile of this kind (the CLI's --nproc-per-node at launch); the
    // table's own count follows, where it has one.
    virtual void setRanksPerNode(QJsonObject *section, int n) const;
    // Why a profile of this kind cannot have (hasNodes) or lack its nodes; empty when it can.
    // cli: in the words of `profiles add` (--node), else of the file ([[nodes]]).
    virtual QString nodesProblem(bool hasNodes, bool cli) const;

    // `profiles add`: the kind's own flags, added to the command's.
    virtual QList<QCommandLineOption> addOptions() const { return {}; }
    // The flag among addOptions() that picks this kind without --transport ("slurm": --slurm);
    // empty: none.
    virtual QString selectingOption() const { return {}; }
    // Fills the profile's table (and placeholder nodes) from the parsed flags, the command's
    // own ones included (--user, --nproc-per-node, …); false and *error ("--nodes: …") when one
    // cannot be used.
    virtual bool applyOptions(const QCommandLineParser &parser, Profile *profile,
                              QString *error) const;
};

// Every kind this program knows, by name: the built-in ones (first used: registered at once),
// then any added (a test's own kind).
class ProfileKinds
{
public:
    // false when a kind of that name exists already.
    static bool add(std::unique_ptr<ProfileKind> kind);
    static const ProfileKind *find(const QString &name);
    // In registration order: local, ssh, slurm, then added ones.
    static QStringList names();
    // The names for a message: "local, ssh or slurm", quoted: "\"local\", \"ssh\" or \"slurm\"".
    static QString list(bool quoted);
};

// The built-in kinds. Defined where every kind is known (core/transport/factory/builtinkinds.cpp),
// the one file that names them all; config/ only declares it and includes none of them.
std::vector<std::unique_ptr<ProfileKind>> builtinProfileKinds();

} // namespace rankdeck
