// SPDX-License-Identifier: GPL-3.0-or-later
//
// NetnsFixture: test nodes on a network of their own. Each node is a network namespace that the
// fixture creates (`ip netns add`), joined to the root namespace by one veth pair: the node's
// end has nodeAddress(i) inside the namespace, the root end hostAddress(i), a /30 of
// 10.213.B.0/24 (B picked so that no other fixture on this machine has it). Nothing else is
// reachable from a namespace, and no address outside them is touched. With it a test can:
//   - run a server inside (execPrefix(i): SshFixture::setNodeNetwork's prefix);
//   - cap the link's bandwidth with tbf in both directions (setRate("512kbit"));
//   - cut the link as a pulled cable does (setLinkUp(i, false): the namespace's end goes down,
//     nothing is reset, both ends just stop hearing each other) and mend it again.
// This kernel has no netem, so delay and stalls come from TcpProxy (tests/common/tcpproxy.h).
//
// Everything is removed when the fixture is destroyed, also when the test failed: processes
// still in a namespace are killed, the namespaces deleted (which deletes their veth pairs).
// Namespaces left by a fixture whose process died (a crashed test) are removed by the next one.
//
// Typical use:
//     NetnsFixture net;
//     if (const QString why = NetnsFixture::unavailableReason(); !why.isEmpty())
//         QSKIP(qPrintable(why));
//     QVERIFY2(net.create(2), qPrintable(net.lastError()));
//     ssh.setNodeNetwork(0, net.nodeAddress(0), net.execPrefix(0));
#pragma once

#include <QString>
#include <QStringList>

class NetnsFixture
{
public:
    NetnsFixture() = default;
    ~NetnsFixture();
    NetnsFixture(const NetnsFixture &) = delete;
    NetnsFixture &operator=(const NetnsFixture &) = delete;

    // Why namespaces cannot be made here (not root, no `ip`, `ip netns add` refused); empty when
    // they can. Tests QSKIP with this text.
    static QString unavailableReason();

    // count namespaces (at most 60), each with its veth pair up and addressed.
    bool create(int count);
    QString lastError() const { return m_error; }

    int count() const { return int(m_names.size()); }
    QString name(int i) const { return m_names.at(i); }
    QString nodeAddress(int i) const;   // inside namespace i
    QString hostAddress(int i) const;   // its peer in the root namespace
    QString nodeInterface(int i) const; // the veth end inside namespace i
    QString hostInterface(int i) const; // the veth end in the root namespace
    // Runs a program inside namespace i: {"ip", "netns", "exec", name(i)} + the program's words.
    QStringList execPrefix(int i) const;

    // The namespace's end of the link down (a cut) or up again; the root end stays up.
    bool setLinkUp(int i, bool up);
    // tbf on both ends ("512kbit", burst 16 kB, latency 400 ms); empty: no cap.
    bool setRate(int i, const QString &rate);

    // Runs `ip ARGS…` (or another program); false and lastError() naming the command otherwise.
    bool run(const QString &program, const QStringList &args, QByteArray *out = nullptr);

private:
    void removeStale();
    void destroy();

    QString m_error;
    QString m_prefix; // names of this fixture's namespaces: rdt-<pid>-
    int m_subnet = -1;
    QStringList m_names;
};
