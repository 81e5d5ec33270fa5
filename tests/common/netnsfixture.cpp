// SPDX-License-Identifier: GPL-3.0-or-later
#include "netnsfixture.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>

#include <csignal>
#include <unistd.h>

namespace {

constexpr int kMaxNamespaces = 60;
const char kNamePrefix[] = "rdt-";

QString ipTool()
{
    return QStandardPaths::findExecutable(QStringLiteral("ip"),
                                          {QStringLiteral("/usr/sbin"), QStringLiteral("/sbin"),
                                           QStringLiteral("/usr/bin"), QStringLiteral("/bin")});
}

} // namespace

QString NetnsFixture::unavailableReason()
{
    if (::geteuid() != 0)
        return QStringLiteral("network namespaces need root (ip netns add)");
    const QString ip = ipTool();
    if (ip.isEmpty())
        return QStringLiteral("no `ip` program (Debian package iproute2)");
    const QString probe =
        QStringLiteral("%1probe-%2").arg(QLatin1String(kNamePrefix)).arg(::getpid());
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(ip, {QStringLiteral("netns"), QStringLiteral("add"), probe});
    if (!p.waitForFinished(10000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        return QStringLiteral("`ip netns add` does not work here: %1")
            .arg(QString::fromLocal8Bit(p.readAll()).trimmed());
    QProcess::execute(ip, {QStringLiteral("netns"), QStringLiteral("del"), probe});
    return {};
}

NetnsFixture::~NetnsFixture()
{
    destroy();
}

bool NetnsFixture::run(const QString &program, const QStringList &args, QByteArray *out)
{
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program == QLatin1String("ip") ? ipTool() : program, args);
    const bool ok =
        p.waitForFinished(15000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
    const QByteArray said = p.readAll();
    if (out)
        *out = said;
    if (!ok)
        m_error =
            QStringLiteral("%1 %2: %3")
                .arg(program, args.join(QLatin1Char(' ')), QString::fromLocal8Bit(said).trimmed());
    return ok;
}

// A fixture whose process is gone (a test that crashed or was killed by ctest's timeout) left
// its namespaces behind: removed, with what still runs in them.
void NetnsFixture::removeStale()
{
    QByteArray list;
    if (!run(QStringLiteral("ip"), {QStringLiteral("netns"), QStringLiteral("list")}, &list))
        return;
    static const QRegularExpression re(QStringLiteral("^(rdt-(\\d+)-\\d+)"));
    for (const QByteArray &line : list.split('\n')) {
        const auto m = re.match(QString::fromLatin1(line));
        if (!m.hasMatch() || QFileInfo::exists(QStringLiteral("/proc/") + m.captured(2)))
            continue;
        QByteArray pids;
        run(QStringLiteral("ip"), {QStringLiteral("netns"), QStringLiteral("pids"), m.captured(1)},
            &pids);
        for (const QByteArray &pid : pids.split('\n'))
            if (pid.toLongLong() > 0)
                ::kill(pid_t(pid.toLongLong()), SIGKILL);
        run(QStringLiteral("ip"), {QStringLiteral("netns"), QStringLiteral("del"), m.captured(1)});
    }
}

bool NetnsFixture::create(int count)
{
    if (count < 1 || count > kMaxNamespaces) {
        m_error = QStringLiteral("between 1 and %1 namespaces").arg(kMaxNamespaces);
        return false;
    }
    removeStale();
    m_prefix = QStringLiteral("%1%2-").arg(QLatin1String(kNamePrefix)).arg(::getpid());
    // A third byte no other interface of this machine has an address in.
    QByteArray addresses;
    run(QStringLiteral("ip"), {QStringLiteral("-o"), QStringLiteral("-4"), QStringLiteral("addr")},
        &addresses);
    for (int k = 0; k < 250 && m_subnet < 0; ++k) {
        const int b = int((::getpid() + k) % 250) + 1;
        if (!addresses.contains(QStringLiteral(" 10.213.%1.").arg(b).toLatin1()))
            m_subnet = b;
    }
    if (m_subnet < 0) {
        m_error = QStringLiteral("no free 10.213.x.0/24 subnet");
        return false;
    }
    const QString ip = QStringLiteral("ip");
    for (int i = 0; i < count; ++i) {
        const QString ns = m_prefix + QString::number(i);
        if (!run(ip, {QStringLiteral("netns"), QStringLiteral("add"), ns}))
            return false;
        m_names << ns;
        const QString host = hostInterface(i);
        const QString node = nodeInterface(i);
        const QString slash30 = QStringLiteral("/30");
        if (!run(ip, {QStringLiteral("link"), QStringLiteral("add"), host, QStringLiteral("type"),
                      QStringLiteral("veth"), QStringLiteral("peer"), QStringLiteral("name"), node,
                      QStringLiteral("netns"), ns}) ||
            !run(ip, {QStringLiteral("addr"), QStringLiteral("add"), hostAddress(i) + slash30,
                      QStringLiteral("dev"), host}) ||
            !run(ip, {QStringLiteral("link"), QStringLiteral("set"), host, QStringLiteral("up")}) ||
            !run(ip, {QStringLiteral("-n"), ns, QStringLiteral("addr"), QStringLiteral("add"),
                      nodeAddress(i) + slash30, QStringLiteral("dev"), node}) ||
            !run(ip, {QStringLiteral("-n"), ns, QStringLiteral("link"), QStringLiteral("set"), node,
                      QStringLiteral("up")}) ||
            !run(ip, {QStringLiteral("-n"), ns, QStringLiteral("link"), QStringLiteral("set"),
                      QStringLiteral("lo"), QStringLiteral("up")}))
            return false;
    }
    return true;
}

void NetnsFixture::destroy()
{
    for (const QString &ns : std::as_const(m_names)) {
        QByteArray pids;
        run(QStringLiteral("ip"), {QStringLiteral("netns"), QStringLiteral("pids"), ns}, &pids);
        for (const QByteArray &pid : pids.split('\n'))
            if (pid.toLongLong() > 0)
                ::kill(pid_t(pid.toLongLong()), SIGKILL);
        run(QStringLiteral("ip"), {QStringLiteral("netns"), QStringLiteral("del"), ns});
    }
    m_names.clear();
}

QString NetnsFixture::nodeAddress(int i) const
{
    return QStringLiteral("10.213.%1.%2").arg(m_subnet).arg(4 * i + 2);
}

QString NetnsFixture::hostAddress(int i) const
{
    return QStringLiteral("10.213.%1.%2").arg(m_subnet).arg(4 * i + 1);
}

QString NetnsFixture::nodeInterface(int i) const
{
    return QStringLiteral("rdn%1x%2").arg(::getpid()).arg(i);
}

QString NetnsFixture::hostInterface(int i) const
{
    return QStringLiteral("rdh%1x%2").arg(::getpid()).arg(i);
}

QStringList NetnsFixture::execPrefix(int i) const
{
    return {ipTool(), QStringLiteral("netns"), QStringLiteral("exec"), name(i)};
}

bool NetnsFixture::setLinkUp(int i, bool up)
{
    return run(QStringLiteral("ip"),
               {QStringLiteral("-n"), name(i), QStringLiteral("link"), QStringLiteral("set"),
                nodeInterface(i), up ? QStringLiteral("up") : QStringLiteral("down")});
}

bool NetnsFixture::setRate(int i, const QString &rate)
{
    const QStringList tbf{QStringLiteral("root"),    QStringLiteral("tbf"),
                          QStringLiteral("rate"),    rate,
                          QStringLiteral("burst"),   QStringLiteral("16kb"),
                          QStringLiteral("latency"), QStringLiteral("400ms")};
    bool ok = true;
    for (const bool inside : {true, false}) {
        QStringList args;
        if (inside)
            args << QStringLiteral("-n") << name(i);
        args << QStringLiteral("qdisc");
        if (rate.isEmpty()) {
            args << QStringLiteral("del") << QStringLiteral("dev")
                 << (inside ? nodeInterface(i) : hostInterface(i)) << QStringLiteral("root");
            run(QStringLiteral("tc"), args); // no qdisc there yet is fine
            continue;
        }
        args << QStringLiteral("replace") << QStringLiteral("dev")
             << (inside ? nodeInterface(i) : hostInterface(i)) << tbf;
        ok = run(QStringLiteral("tc"), args) && ok;
    }
    return ok;
}
