// SPDX-License-Identifier: GPL-3.0-or-later
//
// The profile reader (TOML, toml++ underneath) on a profile file's bytes, as a user or a
// colleague's editor leaves them. Promises checked: a file either loads or names its problems;
// a loaded profile survives being written and read again unchanged (the profile editor saves
// what it loaded), and so does its JSON form (a run record keeps the profile as JSON).
#include "fuzzinput.h"

#include "config/profilestore.h"

#include <QJsonDocument>

using namespace rankdeck;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const QString text =
        QString::fromUtf8(QByteArrayView(reinterpret_cast<const char *>(data), qsizetype(size)));
    Profile profile;
    QList<ProfileError> errors;
    const bool ok = ProfileStore::parse(text, QStringLiteral("fuzz.toml"), &profile, &errors);
    FUZZ_CHECK(ok || !errors.isEmpty());
    for (const ProfileError &error : errors)
        FUZZ_CHECK(!error.toString().isEmpty());
    if (!ok)
        return 0;
    (void)ProfileStore::validate(profile, QStringLiteral("fuzz.toml"));

    const QString written = ProfileStore::serialize(profile);
    Profile again;
    QList<ProfileError> againErrors;
    FUZZ_CHECK(ProfileStore::parse(written, QStringLiteral("fuzz.toml"), &again, &againErrors));
    FUZZ_CHECK(again == profile);

    const QByteArray json = QJsonDocument(profile.toJson()).toJson();
    FUZZ_CHECK(Profile::fromJson(QJsonDocument::fromJson(json).object()) == profile);
    return 0;
}
