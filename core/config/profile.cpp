// SPDX-License-Identifier: GPL-3.0-or-later
#include "config/profile.h"

#include "config/profilekind.h"

#include <QJsonArray>

namespace rankdeck {

bool Profile::isLocal() const
{
    return transport == QLatin1String("local");
}

bool Profile::kindChoosesNodes() const
{
    const ProfileKind *kind = ProfileKinds::find(transport);
    return kind && kind->choosesNodes();
}

void Profile::syncNodes()
{
    if (!kindChoosesNodes())
        return;
    nodes = ProfileKinds::find(transport)->placeholderNodes(section);
}

int Profile::worldSize() const
{
    int n = 0;
    for (const ProfileNode &node : nodes)
        n += node.ranksPerNode;
    return n;
}

void Profile::setRanksPerNode(int n)
{
    for (ProfileNode &node : nodes)
        node.ranksPerNode = n;
    if (const ProfileKind *kind = ProfileKinds::find(transport))
        kind->setRanksPerNode(&section, n);
}

QString Profile::effectiveWorkerDirectory() const
{
    return workerDirectory.isEmpty() ? QStringLiteral("~/.cache/rankdeck/worker") : workerDirectory;
}

QString Profile::builtinLocalName()
{
    return QStringLiteral("local");
}

Profile Profile::builtinLocal(int nprocPerNode)
{
    Profile p;
    p.name = builtinLocalName();
    p.transport = QStringLiteral("local");
    ProfileNode node;
    node.host = QStringLiteral("localhost");
    node.ranksPerNode = nprocPerNode;
    p.nodes.append(node);
    // Local ranks talk over loopback; "localhost" may resolve to ::1 first, which Gloo's
    // hostname device then fails to match.
    p.rendezvousAddress = QStringLiteral("127.0.0.1");
    return p;
}

QJsonObject Profile::toJson() const
{
    QJsonObject o;
    o[QStringLiteral("schema_version")] = schemaVersion;
    o[QStringLiteral("name")] = name;
    o[QStringLiteral("transport")] = transport;
    QJsonArray ns;
    for (const ProfileNode &n : nodes) {
        QJsonObject j;
        j[QStringLiteral("host")] = n.host;
        j[QStringLiteral("port")] = n.port;
        j[QStringLiteral("user")] = n.user;
        j[QStringLiteral("identity_file")] = n.identityFile;
        j[QStringLiteral("ranks_per_node")] = n.ranksPerNode;
        j[QStringLiteral("gpus_per_node")] = n.gpusPerNode;
        ns.append(j);
    }
    o[QStringLiteral("nodes")] = ns;
    o[QStringLiteral("rendezvous_address")] = rendezvousAddress;
    o[QStringLiteral("worker_directory")] = workerDirectory;
    o[QStringLiteral("libtorch_path")] = libtorchPath;
    QJsonObject env;
    for (auto it = environment.cbegin(); it != environment.cend(); ++it)
        env[it.key()] = it.value();
    o[QStringLiteral("environment")] = env;
    o[QStringLiteral("metrics")] = QJsonArray::fromStringList(metricPatterns);
    o[QStringLiteral("warm_python")] = warmPython;
    o[QStringLiteral("flight_recorder")] = flightRecorder;
    o[QStringLiteral("backend")] = backend;
    o[QStringLiteral("connect_timeout")] = connectTimeoutSec;
    o[QStringLiteral("rendezvous_timeout")] = rendezvousTimeoutSec;
    o[QStringLiteral("heartbeat_timeout")] = heartbeatTimeoutSec;
    o[QStringLiteral("collective_timeout")] = collectiveTimeoutSec;
    o[QStringLiteral("orphan_grace")] = orphanGraceSec;
    // The kind's table under its name ("slurm"), every field.
    if (const ProfileKind *kind = ProfileKinds::find(transport);
        kind && !kind->sectionFields().isEmpty())
        o[transport] = kind->completeSection(section);
    return o;
}

Profile Profile::fromJson(const QJsonObject &o)
{
    Profile p;
    p.schemaVersion = o.value(QStringLiteral("schema_version")).toInt(1);
    p.name = o.value(QStringLiteral("name")).toString();
    p.transport = o.value(QStringLiteral("transport")).toString(QStringLiteral("local"));
    const QJsonArray ns = o.value(QStringLiteral("nodes")).toArray();
    for (const auto &v : ns) {
        const QJsonObject j = v.toObject();
        ProfileNode n;
        n.host = j.value(QStringLiteral("host")).toString();
        n.port = j.value(QStringLiteral("port")).toInt(22);
        n.user = j.value(QStringLiteral("user")).toString();
        n.identityFile = j.value(QStringLiteral("identity_file")).toString();
        n.ranksPerNode = j.value(QStringLiteral("ranks_per_node")).toInt(1);
        n.gpusPerNode = j.value(QStringLiteral("gpus_per_node")).toInt(0);
        p.nodes.append(n);
    }
    p.rendezvousAddress = o.value(QStringLiteral("rendezvous_address")).toString();
    p.workerDirectory = o.value(QStringLiteral("worker_directory")).toString();
    p.libtorchPath = o.value(QStringLiteral("libtorch_path")).toString();
    const QJsonObject env = o.value(QStringLiteral("environment")).toObject();
    for (auto it = env.begin(); it != env.end(); ++it)
        p.environment.insert(it.key(), it.value().toString());
    const QJsonArray metrics = o.value(QStringLiteral("metrics")).toArray();
    for (const auto &v : metrics)
        p.metricPatterns << v.toString();
    p.warmPython = o.value(QStringLiteral("warm_python")).toBool();
    p.flightRecorder = o.value(QStringLiteral("flight_recorder")).toBool(true);
    p.backend = o.value(QStringLiteral("backend")).toString(QStringLiteral("auto"));
    p.connectTimeoutSec = o.value(QStringLiteral("connect_timeout")).toInt(10);
    p.rendezvousTimeoutSec = o.value(QStringLiteral("rendezvous_timeout")).toInt(60);
    p.heartbeatTimeoutSec = o.value(QStringLiteral("heartbeat_timeout")).toInt(10);
    p.collectiveTimeoutSec = o.value(QStringLiteral("collective_timeout")).toInt(300);
    p.orphanGraceSec = o.value(QStringLiteral("orphan_grace")).toInt(4);
    if (const ProfileKind *kind = ProfileKinds::find(p.transport);
        kind && !kind->sectionFields().isEmpty())
        p.section = kind->completeSection(o.value(p.transport).toObject());
    return p;
}

} // namespace rankdeck
