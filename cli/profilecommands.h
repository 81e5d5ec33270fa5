// SPDX-License-Identifier: GPL-3.0-or-later
//
// `rankdeck-cli profiles list|show|check|add|remove`: cluster profiles from scripts.
#pragma once

#include "config/profile.h"

#include <QStringList>

class QCommandLineParser;

namespace rankdeck::cli {

class ProfileCommands
{
public:
    static int run(const QStringList &args);

private:
    static int list(const QStringList &args);
    static int show(const QStringList &args);
    static int check(const QStringList &args);
    static int add(const QStringList &args);
    static int remove(const QStringList &args);
    // Validates and writes a new profile; the exit code of `profiles add`.
    static int saveNew(const Profile &p, bool force);
};

} // namespace rankdeck::cli
