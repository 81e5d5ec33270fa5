// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

// Which RankDeck this is: the project version (CMake's project()) and the git commit it was
// built from ("unknown" for a build outside git, "-dirty" appended when tracked files had
// changed). --version prints it and every run record keeps it.
namespace rankdeck::BuildVersion {
QString version();
QString commit();
// "0.1.0 (git 1a2b3c4d5e6f)", or "0.1.0" alone when the commit is unknown.
QString describe();
QString describe(const QString &version, const QString &commit);
// Whether a run recorded with (version, commit) was made by another RankDeck than this one. An
// unknown or missing commit on either side compares the versions only.
bool isOther(const QString &version, const QString &commit);
} // namespace rankdeck::BuildVersion
