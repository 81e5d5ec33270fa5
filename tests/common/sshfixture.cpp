// SPDX-License-Identifier: GPL-3.0-or-later
#include "sshfixture.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QHostAddress>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QThread>

#include <csignal>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

namespace {

const char kSshd[] = "/usr/sbin/sshd";

QString keygenPath()
{
    return QStandardPaths::findExecutable(QStringLiteral("ssh-keygen"));
}

// useradd and userdel live in sbin, which a test's PATH may lack.
QString adminTool(const QString &name)
{
    const QString found = QStandardPaths::findExecutable(name);
    if (!found.isEmpty())
        return found;
    return QStandardPaths::findExecutable(name,
                                          {QStringLiteral("/usr/sbin"), QStringLiteral("/sbin")});
}

// Accounts made by addPasswordUser(): the prefix and the pid of the test that made it.
const char kUserPrefix[] = "rdktest";

// SIGKILL to every process of a uid (what a test user ran on the "nodes"), so userdel can
// remove the account.
void killProcessesOf(uid_t uid)
{
    const QStringList entries =
        QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &e : entries) {
        bool ok = false;
        const qint64 pid = e.toLongLong(&ok);
        struct stat st
        {
        };
        if (ok && ::stat(QFile::encodeName(QStringLiteral("/proc/") + e).constData(), &st) == 0 &&
            st.st_uid == uid)
            ::kill(pid_t(pid), SIGKILL);
    }
}

bool deleteUser(const QString &name)
{
    const QByteArray n = name.toLocal8Bit();
    if (const passwd *pw = ::getpwnam(n.constData()))
        killProcessesOf(pw->pw_uid);
    else
        return true;
    QProcess p;
    p.start(adminTool(QStringLiteral("userdel")), {name});
    return p.waitForFinished(30000) && p.exitCode() == 0;
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
    removePasswordUser();
}

QString SshFixture::unavailableReason()
{
    if (::geteuid() != 0)
        return QStringLiteral("SSH fixture needs root (sshd cannot log in other users otherwise)");
    if (!QFileInfo(QString::fromLatin1(kSshd)).isExecutable())
        return QStringLiteral("SSH fixture needs %1 (apt-get install openssh-server)")
            .arg(QString::fromLatin1(kSshd));
    if (keygenPath().isEmpty())
        return QStringLiteral("SSH fixture needs ssh-keygen (apt-get install openssh-client)");
    return {};
}

QString SshFixture::passwordUserUnavailableReason()
{
    if (const QString why = unavailableReason(); !why.isEmpty())
        return why;
    for (const char *tool : {"useradd", "userdel"}) {
        if (adminTool(QString::fromLatin1(tool)).isEmpty())
            return QStringLiteral("password logins need %1 (apt-get install passwd)")
                .arg(QString::fromLatin1(tool));
    }
    if (QStandardPaths::findExecutable(QStringLiteral("openssl")).isEmpty())
        return QStringLiteral(
            "password logins need openssl to hash the password (apt-get install openssl)");
    if (!QFileInfo::exists(QStringLiteral("/etc/pam.d/sshd")))
        return QStringLiteral("password logins need sshd's PAM configuration /etc/pam.d/sshd "
                              "(apt-get install openssh-server)");
    return {};
}

bool SshFixture::addPasswordUser(const QByteArray &password)
{
    if (const QString why = passwordUserUnavailableReason(); !why.isEmpty()) {
        m_error = why;
        return false;
    }
    if (!m_dir.isValid()) {
        m_error = QStringLiteral("cannot create a temporary directory");
        return false;
    }
    // Accounts of tests that died before their cleanup: their pid is gone.
    const QRegularExpression stale(
        QStringLiteral("^%1(\\d+)x\\d+$").arg(QString::fromLatin1(kUserPrefix)));
    QStringList leftovers;
    ::setpwent();
    while (const passwd *pw = ::getpwent()) {
        const QRegularExpressionMatch m = stale.match(QString::fromLocal8Bit(pw->pw_name));
        if (m.hasMatch() && !QFileInfo::exists(QStringLiteral("/proc/") + m.captured(1)))
            leftovers.append(m.captured(0));
    }
    ::endpwent();
    for (const QString &name : leftovers)
        deleteUser(name);

    // One account per fixture: rdktest<pid>x<n>.
    static int accounts = 0;
    const QString name = QStringLiteral("%1%2x%3")
                             .arg(QString::fromLatin1(kUserPrefix))
                             .arg(QCoreApplication::applicationPid())
                             .arg(++accounts);
    deleteUser(name);
    // The hash goes through stdin so that the password is on no command line.
    QProcess openssl;
    openssl.start(QStandardPaths::findExecutable(QStringLiteral("openssl")),
                  {QStringLiteral("passwd"), QStringLiteral("-6"), QStringLiteral("-stdin")});
    openssl.write(password + '\n');
    openssl.closeWriteChannel();
    if (!openssl.waitForFinished(30000) || openssl.exitCode() != 0) {
        m_error = QStringLiteral("openssl passwd failed: %1")
                      .arg(QString::fromLocal8Bit(openssl.readAllStandardError()));
        return false;
    }
    const QString hash = QString::fromLatin1(openssl.readAllStandardOutput().trimmed());
    // Its passwd home (where sshd starts the session) and the node homes are below the fixture's
    // directory, which must then be traversable by that user.
    const QString pwHome = m_dir.filePath(QStringLiteral("passwd-home"));
    QDir().mkpath(pwHome);
    ::chmod(QFile::encodeName(m_dir.path()).constData(), 0711);
    if (!runTool(adminTool(QStringLiteral("useradd")),
                 {QStringLiteral("-M"), QStringLiteral("-d"), pwHome, QStringLiteral("-s"),
                  QStringLiteral("/bin/sh"), QStringLiteral("-c"),
                  QStringLiteral("RankDeck test account, removed by its test"),
                  QStringLiteral("-p"), hash, name}))
        return false;
    m_passwordUser = name;
    const passwd *pw = ::getpwnam(name.toLocal8Bit().constData());
    if (!pw || ::chown(QFile::encodeName(pwHome).constData(), pw->pw_uid, pw->pw_gid) != 0) {
        m_error = QStringLiteral("cannot give %1 to %2").arg(pwHome, name);
        return false;
    }
    return true;
}

void SshFixture::removePasswordUser()
{
    if (m_passwordUser.isEmpty())
        return;
    if (!deleteUser(m_passwordUser))
        qWarning("SshFixture: cannot remove the test account %s", qPrintable(m_passwordUser));
    m_passwordUser.clear();
}

QString SshFixture::passwordUserHome(int node) const
{
    return m_nodes.at(node)->dir + QStringLiteral("/users/") + m_passwordUser;
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
        m_error =
            QStringLiteral("%1 %2 failed: %3")
                .arg(program, args.join(u' '), QString::fromLocal8Bit(p.readAllStandardError()));
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
    if (!runTool(keygenPath(),
                 {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"),
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
    return runTool(keygenPath(),
                   {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"),
                    QStringLiteral("-N"), QString(), QStringLiteral("-f"), node.hostKey});
}

bool SshFixture::writeConfig(const Node &node)
{
    QFile f(node.dir + QStringLiteral("/sshd_config"));
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        m_error = f.errorString();
        return false;
    }
    const auto yesNo = [](bool b) { return b ? QStringLiteral("yes") : QStringLiteral("no"); };
    // PAM only where passwords are in play: keyboard-interactive has no other backend on Linux,
    // and a stock Debian server checks passwords through it too.
    const bool pam = m_options.passwordAuthentication || m_options.kbdInteractiveAuthentication;
    // StrictModes off: the temp directory belongs to the test, not to a user's home. MaxSessions
    // is raised because the transport opens one channel per rank plus short command channels.
    QString config =
        QStringLiteral("ListenAddress %1:%2\n"
                       "HostKey %3\n"
                       "PidFile %4/sshd.pid\n"
                       "AuthorizedKeysFile %5\n"
                       "StrictModes no\n"
                       "UsePAM %6\n"
                       "PermitRootLogin prohibit-password\n"
                       "PubkeyAuthentication yes\n"
                       "PasswordAuthentication %7\n"
                       "KbdInteractiveAuthentication %8\n"
                       "%10"
                       "MaxSessions 200\n"
                       "MaxStartups 100\n"
                       "PrintMotd no\n"
                       "PrintLastLog no\n"
                       "LogLevel %9\n")
            .arg(node.address)
            .arg(node.port)
            .arg(node.hostKey, node.dir, m_authorizedKeys, yesNo(pam),
                 yesNo(m_options.passwordAuthentication),
                 yesNo(m_options.kbdInteractiveAuthentication), m_options.logLevel)
            .arg(m_options.sftp ? QStringLiteral("Subsystem sftp internal-sftp\n") : QString());
    QString extra;
    for (const QString &kv : m_options.environment)
        extra += QLatin1Char(' ') + kv;
    // sshd keeps the first SetEnv that applies, so the test account's Match comes first.
    if (!m_passwordUser.isEmpty())
        config += QStringLiteral("Match User %1\n  SetEnv HOME=%2/users/%1%3\nMatch all\n")
                      .arg(m_passwordUser, node.dir, extra);
    // One line: only the first SetEnv line counts.
    config += QStringLiteral("SetEnv HOME=%1/home%2").arg(node.dir, extra);
    for (const QString &assignment : node.environment)
        config += QLatin1Char(' ') + assignment;
    config += QLatin1Char('\n');
    f.write(config.toUtf8());
    return true;
}

bool SshFixture::launch(Node &node)
{
    // sshd refuses to start without its privilege separation directory, which a container may
    // lack until the ssh service ran once.
    QDir().mkpath(QStringLiteral("/run/sshd"));
    node.process = std::make_unique<QProcess>();
    // -e to a file rather than -E: with -E only the listener logs there, the re-executed
    // per-connection processes (authentication, forwarding) go to syslog.
    node.process->setStandardOutputFile(QProcess::nullDevice());
    node.process->setStandardErrorFile(node.dir + QStringLiteral("/sshd.log"), QIODevice::Append);
    QStringList args = node.prefix;
    args << QString::fromLatin1(kSshd) << QStringLiteral("-D") << QStringLiteral("-e")
         << QStringLiteral("-f") << node.dir + QStringLiteral("/sshd_config");
    const QString program = args.takeFirst();
    node.process->start(program, args);
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
            m_error = QStringLiteral("sshd on %1:%2 exited: %3")
                          .arg(node.address)
                          .arg(node.port)
                          .arg(QString::fromLocal8Bit(log.readAll()));
            return false;
        }
        QTcpSocket socket;
        socket.connectToHost(node.address, quint16(node.port));
        if (socket.waitForConnected(500) && socket.waitForReadyRead(2000) &&
            socket.readAll().startsWith("SSH-2.0"))
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
        if (m_nodeNetwork.contains(i)) {
            // A namespace of its own: nothing else listens there.
            node->address = m_nodeNetwork.value(i).first;
            node->prefix = m_nodeNetwork.value(i).second;
            node->port = 2222;
        } else {
            node->address = QStringLiteral("127.0.0.%1").arg(2 + i);
            node->port = freePort(node->address);
        }
        node->dir = m_dir.filePath(QStringLiteral("node%1").arg(i));
        node->hostKey = node->dir + QStringLiteral("/host_ed25519");
        if (node->port == 0) {
            m_error = QStringLiteral("no free port on %1").arg(node->address);
            return false;
        }
        QDir().mkpath(node->dir + QStringLiteral("/home"));
        if (!m_passwordUser.isEmpty()) {
            const QString home = node->dir + QStringLiteral("/users/") + m_passwordUser;
            const passwd *pw = ::getpwnam(m_passwordUser.toLocal8Bit().constData());
            if (!QDir().mkpath(home) || !pw ||
                ::chown(QFile::encodeName(home).constData(), pw->pw_uid, pw->pw_gid) != 0) {
                m_error = QStringLiteral("cannot create %1 for %2").arg(home, m_passwordUser);
                return false;
            }
            ::chmod(QFile::encodeName(node->dir).constData(), 0711);
            ::chmod(QFile::encodeName(node->dir + QStringLiteral("/users")).constData(), 0711);
        }
        node->environment = m_nodeEnvironment.value(i);
        m_nodes.append(node);
        if (!generateHostKey(*node) || !writeConfig(*node) || !launch(*node))
            return false;
    }
    return true;
}

QString SshFixture::address(int node) const
{
    return m_nodes.at(node)->address;
}
int SshFixture::port(int node) const
{
    return m_nodes.at(node)->port;
}
QString SshFixture::home(int node) const
{
    return m_nodes.at(node)->dir + QStringLiteral("/home");
}
QString SshFixture::logFile(int node) const
{
    return m_nodes.at(node)->dir + QStringLiteral("/sshd.log");
}

QByteArray SshFixture::log(int node) const
{
    QFile f(logFile(node));
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

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
    return QStringLiteral("[%1]:%2 %3 %4")
        .arg(address(node))
        .arg(port(node))
        .arg(QString::fromLatin1(fields[0]), QString::fromLatin1(fields[1]));
}

QString SshFixture::hostFingerprint(int node) const
{
    QProcess p;
    p.start(keygenPath(),
            {QStringLiteral("-l"), QStringLiteral("-E"), QStringLiteral("sha256"),
             QStringLiteral("-f"), m_nodes.at(node)->hostKey + QStringLiteral(".pub")});
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
    const QStringList entries =
        QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
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
