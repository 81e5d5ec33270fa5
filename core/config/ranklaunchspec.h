// SPDX-License-Identifier: GPL-3.0-or-later
//
// A value of config/ (LaunchPlan makes it) that transports consume: here so that config/ does
// not include transport/, which includes config/.
#pragma once

#include <QHash>
#include <QString>
#include <QStringList>

namespace rankdeck {

// What a transport needs to start one rank.
struct RankLaunchSpec
{
    int rank = 0;
    int nodeIndex = 0; // index into the profile's nodes
    QString program;   // worker path as seen from the node
    QStringList arguments;
    QHash<QString, QString> environment; // added to (and overriding) the node's environment
    QString workingDirectory;            // empty: transport default
    QString nodeRunDirectory; // run directory on the node (complete output is kept there)
};

} // namespace rankdeck
