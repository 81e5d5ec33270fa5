// SPDX-License-Identifier: GPL-3.0-or-later
#include "sshfixture.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QHostAddress>
#include <QProcess>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QThread>

#include <csignal>
#include <pwd.h>
#include <sys/types.h>
#include <unistd.h>

namespace {

const char kSshd[] = "/usr/sbin/sshd";

QString keygenPath()
{
    return QStandardPaths::findExecutable(QStringLiteral("ssh-keygen"));
}

// Parent pid and command name of a process, from /proc (no procps needed).
bool readStat(qint64 pid, qint64 *ppid, QString *comm)
{
    QFile f(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return false;
    const QByteArray s = f.readAll();
    const int open = s.indexOf('(');
    const int close = s.lastIndexOf(')');
    if (open < 0 || close < open)
        return false;
    *comm = QString::fromUtf8(s.mid(open + 1, close - open - 1));
    const QList<QByteArray> rest = s.mid(close + 2).split(' ');
    if (rest.size() < 2)
        return false;
    *ppid = rest.at(1).toLongLong();
    return true;
}

int freePort(const QString &address)
{
    QTcpServer server;
    if (!server.listen(QHostAddress(address), 0))
        return 0;
    return server.serverPort();
}

} // namespace

SshFixture::SshFixture() = default;

SshFixture::~SshFixture()
{
    for (int i = 0; i < m_nodes.size(); ++i)
        stopNode(i);
}

QString SshFixture::unavailableReason()
{
    if (::geteuid() != 0)
        return QStringLiteral("SSH fixture needs root (sshd cannot log in other users otherwise)");
    if (!QFileInfo(QString::fromLatin1(kSshd)).isExecutable())
        return QStringLiteral("SSH fixture needs %1 (apt-get install openssh-server)").arg(QString::fromLatin1(kSshd));
    if (keygenPath().isEmpty())
        return QStringLiteral("SSH fixture needs ssh-keygen (apt-get install openssh-client)");
    return {};
}

QString SshFixture::user() const
{
    const passwd *pw = ::getpwuid(::geteuid());
    return pw ? QString::fromLocal8Bit(pw->pw_name) : QStringLiteral("root");
}

bool SshFixture::runTool(const QString &program, const QStringList &args, QByteArray *out)
{
    QProcess p;
    p.start(program, args);
    if (!p.waitForFinished(30000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        m_error = QStringLiteral("%1 %2 failed: %3").arg(program, args.join(u' '),
                                                         QString::fromLocal8Bit(p.readAllStandardError()));
        return false;
    }
    if (out)
        *out = p.readAllStandardOutput();
    return true;
}

QString SshFixture::createKey(const QString &name, const QByteArray &passphrase, bool authorize)
{
    const QString path = m_dir.filePath(name);
    QFile::remove(path);
    QFile::remove(path + QStringLiteral(".pub"));
    if (!runTool(keygenPath(), {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"),
                                QStringLiteral("-N"), QString::fromUtf8(passphrase), QStringLiteral("-C"),
                                QStringLiteral("rankdeck-test-") + name, QStringLiteral("-f"), path}))
        return {};
    if (authorize) {
        QFile pub(path + QStringLiteral(".pub"));
        QFile auth(m_authorizedKeys);
        if (!pub.open(QIODevice::ReadOnly) || !auth.open(QIODevice::Append)) {
            m_error = QStringLiteral("cannot authorize %1").arg(path);
            return {};
        }
        auth.write(pub.readAll());
    }
    return path;
}

bool SshFixture::generateHostKey(Node &node)
{
    QFile::remove(node.hostKey);
    QFile::remove(node.hostKey + QStringLiteral(".pub"));
    return runTool(keygenPath(), {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"),
                                  QStringLiteral("-N"), QString(), QStringLiteral("-f"), node.hostKey});
}

bool SshFixture::writeConfig(const Node &node)
{
    QFile f(node.dir + QStringLiteral("/sshd_config"));
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        m_error = f.errorString();
        return false;
    }
    // StrictModes off: the temp directory belongs to the test, not to a user's home. MaxSessions
    // is raised because the transport opens one channel per rank plus short command channels.
    const QString config = QStringLiteral(
        "ListenAddress %1:%2\n"
        "HostKey %3\n"
        "PidFile %4/sshd.pid\n"
        "AuthorizedKeysFile %5\n"
        "StrictModes no\n"
        "UsePAM no\n"
        "PermitRootLogin prohibit-password\n"
        "PubkeyAuthentication yes\n"
        "PasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\n"
        "Subsystem sftp internal-sftp\n"
        "SetEnv HOME=%4/home\n"
        "MaxSessions 200\n"
        "MaxStartups 100\n"
        "PrintMotd no\n"
        "PrintLastLog no\n"
        "LogLevel VERBOSE\n")
        .arg(node.address).arg(node.port).arg(node.hostKey, node.dir, m_authorizedKeys);
    f.write(config.toUtf8());
    return true;
}

bool SshFixture::launch(Node &node)
{
    // sshd refuses to start without its privilege separation directory, which a container may
    // lack until the ssh service ran once.
    QDir().mkpath(QStringLiteral("/run/sshd"));
    node.process = std::make_unique<QProcess>();
    node.process->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    node.process->start(QString::fromLatin1(kSshd),
                        {QStringLiteral("-D"), QStringLiteral("-f"), node.dir + QStringLiteral("/sshd_config"),
                         QStringLiteral("-E"), node.dir + QStringLiteral("/sshd.log")});
    if (!node.process->waitForStarted(10000)) {
        m_error = QStringLiteral("cannot start sshd: %1").arg(node.process->errorString());
        return false;
    }
    // Ready when it greets: the banner proves the listener and the host key both work.
    QDeadlineTimer deadline(15000);
    while (!deadline.hasExpired()) {
        if (node.process->state() != QProcess::Running) {
            QFile log(node.dir + QStringLiteral("/sshd.log"));
            log.open(QIODevice::ReadOnly);
            m_error = QStringLiteral("sshd on %1:%2 exited: %3").arg(node.address).arg(node.port)
                          .arg(QString::fromLocal8Bit(log.readAll()));
            return false;
        }
        QTcpSocket socket;
        socket.connectToHost(node.address, quint16(node.port));
        if (socket.waitForConnected(500) && socket.waitForReadyRead(2000)
            && socket.readAll().startsWith("SSH-2.0"))
            return true;
        QThread::msleep(50);
    }
    m_error = QStringLiteral("sshd on %1:%2 did not answer").arg(node.address).arg(node.port);
    return false;
}

bool SshFixture::start(int nodeCount)
{
    if (!m_dir.isValid()) {
        m_error = QStringLiteral("cannot create a temporary directory");
        return false;
    }
    if (const QString why = unavailableReason(); !why.isEmpty()) {
        m_error = why;
        return false;
    }
    m_authorizedKeys = m_dir.filePath(QStringLiteral("authorized_keys"));
    QFile(m_authorizedKeys).open(QIODevice::WriteOnly | QIODevice::Truncate);
    m_clientKey = createKey(QStringLiteral("client_ed25519"));
    if (m_clientKey.isEmpty())
        return false;
    for (int i = 0; i < nodeCount; ++i) {
        auto node = std::make_shared<Node>();
        node->address = QStringLiteral("127.0.0.%1").arg(2 + i);
        node->port = freePort(node->address);
        node->dir = m_dir.filePath(QStringLiteral("node%1").arg(i));
        node->hostKey = node->dir + QStringLiteral("/host_ed25519");
        if (node->port == 0) {
            m_error = QStringLiteral("no free port on %1").arg(node->address);
            return false;
        }
        QDir().mkpath(node->dir + QStringLiteral("/home"));
        m_nodes.append(node);
        if (!generateHostKey(*node) || !writeConfig(*node) || !launch(*node))
            return false;
    }
    return true;
}

QString SshFixture::address(int node) const { return m_nodes.at(node)->address; }
int SshFixture::port(int node) const { return m_nodes.at(node)->port; }
QString SshFixture::home(int node) const { return m_nodes.at(node)->dir + QStringLiteral("/home"); }
QString SshFixture::logFile(int node) const { return m_nodes.at(node)->dir + QStringLiteral("/sshd.log"); }

qint64 SshFixture::serverPid(int node) const
{
    const auto &p = m_nodes.at(node)->process;
    return p && p->state() == QProcess::Running ? p->processId() : 0;
}

QString SshFixture::knownHostsLine(int node) const
{
    QFile pub(m_nodes.at(node)->hostKey + QStringLiteral(".pub"));
    if (!pub.open(QIODevice::ReadOnly))
        return {};
    const QList<QByteArray> fields = pub.readAll().simplified().split(' ');
    if (fields.size() < 2)
        return {};
    return QStringLiteral("[%1]:%2 %3 %4").arg(address(node)).arg(port(node))
        .arg(QString::fromLatin1(fields[0]), QString::fromLatin1(fields[1]));
}

QString SshFixture::hostFingerprint(int node) const
{
    QProcess p;
    p.start(keygenPath(), {QStringLiteral("-l"), QStringLiteral("-E"), QStringLiteral("sha256"), QStringLiteral("-f"),
                           m_nodes.at(node)->hostKey + QStringLiteral(".pub")});
    if (!p.waitForFinished(10000))
        return {};
    const QList<QByteArray> fields = p.readAllStandardOutput().simplified().split(' ');
    return fields.size() >= 2 ? QString::fromLatin1(fields[1]) : QString();
}

bool SshFixture::writeKnownHosts(const QString &path, bool hashed, const QList<int> &nodes) const
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return false;
    for (int i = 0; i < nodeCount(); ++i) {
        if (nodes.isEmpty() || nodes.contains(i))
            f.write(knownHostsLine(i).toUtf8() + '\n');
    }
    f.close();
    if (!hashed)
        return true;
    QProcess p;
    p.start(keygenPath(), {QStringLiteral("-H"), QStringLiteral("-f"), path});
    const bool ok = p.waitForFinished(10000) && p.exitCode() == 0;
    QFile::remove(path + QStringLiteral(".old"));
    return ok;
}

bool SshFixture::stopNode(int node)
{
    Node &n = *m_nodes.at(node);
    if (!n.process)
        return true;
    // Connections first: the listener's death alone would leave them serving.
    killSessions(node);
    n.process->terminate();
    if (!n.process->waitForFinished(5000)) {
        n.process->kill();
        n.process->waitForFinished(5000);
    }
    n.process.reset();
    return true;
}

bool SshFixture::startNode(int node)
{
    Node &n = *m_nodes.at(node);
    if (n.process)
        return true;
    return launch(n);
}

bool SshFixture::changeHostKey(int node)
{
    stopNode(node);
    return generateHostKey(*m_nodes.at(node)) && startNode(node);
}

QList<qint64> SshFixture::sessionPids(int node) const
{
    const qint64 root = serverPid(node);
    QList<qint64> result;
    if (root == 0)
        return result;
    // Walk the process tree below the listener; only sshd processes are sessions, what they ran
    // (the user's commands) is left alone.
    QList<qint64> frontier{root};
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QHash<qint64, QList<qint64>> children;
    QHash<qint64, QString> names;
    for (const QString &e : entries) {
        bool ok = false;
        const qint64 pid = e.toLongLong(&ok);
        qint64 ppid = 0;
        QString comm;
        if (ok && readStat(pid, &ppid, &comm)) {
            children[ppid].append(pid);
            names[pid] = comm;
        }
    }
    while (!frontier.isEmpty()) {
        const qint64 p = frontier.takeFirst();
        for (qint64 c : children.value(p)) {
            if (names.value(c) == QLatin1String("sshd")) {
                result.append(c);
                frontier.append(c);
            }
        }
    }
    return result;
}

int SshFixture::killSessions(int node)
{
    const QList<qint64> pids = sessionPids(node);
    for (qint64 pid : pids)
        ::kill(pid_t(pid), SIGKILL);
    return int(pids.size());
}
