// SPDX-License-Identifier: GPL-3.0-or-later
//
// What the SSH transport is told about a node (SshNodeSettings, the same for every node of a
// transport) and what it finds out (SshNodeInfo). Plain data shared by SshTransport, the node's
// connection and its deployer.
#pragma once

#include "transport/transport.h"
#include "util/nodeclock.h"

#include <QMetaType>
#include <QString>
#include <QStringList>

namespace rankdeck {

// What the node check found; also the answer to a "test connection".
struct SshNodeInfo
{
    int nodeIndex = 0;
    QString host;        // as the profile names it
    QString label;       // user@address:port actually used
    QString fingerprint; // SHA256 of the host key
    QString home;
    QString os;           // uname -srm
    QString distribution; // PRETTY_NAME from /etc/os-release
    int cpus = 0;
    QStringList gpus;            // nvidia-smi -L lines; empty without nvidia-smi
    QString workerPath;          // deployed worker (empty when prepare had no local worker)
    bool workerUploaded = false; // false: the node already had this content
    qint64 workerBytes = 0;
    QString libtorchDirectory; // added to LD_LIBRARY_PATH for ranks; empty: not needed
    SyncStats sync;            // the sync directory's copy (directory empty: no sync)
    NodeClock clock;           // the node's clock offset, measured after the connect
    QString error;             // why the node is not usable; empty: ready
};

struct SshNodeSettings
{
    QString runId;
    QString workerDirectory = QStringLiteral("~/.cache/rankdeck/worker");
    QString libtorchPath;          // "", "python" or a directory on the node
    QString defaultRunDirectory;   // used when a spec has none ("~/…" allowed)
    int reconnectDeadlineSec = 30; // how long a lost connection is retried before ranks are lost
    bool detached = false;         // ranks keep running when the launcher goes away
    // Not detached: the ranks end this long after the node lost its launcher (Profile's
    // orphanGraceSec), and the launcher gives the node up after as long.
    int orphanGraceSec = 4;
    QString syncDirectory;     // local directory copied to the node (launch --sync)
    qint64 syncLimitBytes = 0; // the most it may hold; <= 0: no limit
    int clockRefreshSec = 30;  // the clock offset is measured again this often while ranks run
};

} // namespace rankdeck

Q_DECLARE_METATYPE(rankdeck::SshNodeInfo)
