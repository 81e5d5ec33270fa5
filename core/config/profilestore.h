// SPDX-License-Identifier: GPL-3.0-or-later
//
// Cluster profiles on disk: one human-editable TOML file per profile under
// $XDG_CONFIG_HOME/rankdeck/profiles/<name>.toml. The built-in "local" profile needs no file.
// A broken file is reported with file, line and field and is never overwritten.
#pragma once

#include "config/profile.h"
#include "config/profileerror.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace rankdeck {

class ProfileStore
{
public:
    static constexpr int kSchemaVersion = 1;
    static constexpr qint64 kMaxFileBytes = qint64(4) * 1024 * 1024;

    // An empty directory means the default: $XDG_CONFIG_HOME/rankdeck/profiles.
    explicit ProfileStore(const QString &directory = QString());

    static QString defaultDirectory();
    QString directory() const { return m_directory; }
    QString filePath(const QString &name) const;

    // Profile names with a file, plus "local" (always available).
    QStringList names() const;
    bool exists(const QString &name) const;

    // Reads a profile; "local" without a file is the built-in one. On failure returns false and
    // fills errors (every problem found, not just the first).
    bool load(const QString &name, Profile *profile, QList<ProfileError> *errors) const;
    // Writes a profile. Refuses to replace a file it cannot read (the user's edits stay) and,
    // unless overwrite is set, any existing file.
    bool save(const Profile &profile, bool overwrite, QString *error) const;
    bool remove(const QString &name, QString *error) const;

    // Parses profile text; fileName is used in messages and gives the name when the text has none.
    static bool parse(const QString &text, const QString &fileName, Profile *profile,
                      QList<ProfileError> *errors);
    static QString serialize(const Profile &profile);
    // Checks values that parse but cannot work (no nodes, bad port, …).
    static QList<ProfileError> validate(const Profile &profile,
                                        const QString &fileName = QString());
    static bool isValidName(const QString &name);
    // Why a node's host or user cannot be used (a leading '-', ';', a newline, …); empty when it
    // can. Checked when a profile is read and before one is saved.
    static QString hostProblem(const QString &host);
    static QString userProblem(const QString &user);

private:
    QString m_directory;
};

} // namespace rankdeck
