// SPDX-License-Identifier: GPL-3.0-or-later
//
// SshHostKeyVerifier's decisions without a server: what known_hosts says, what the interaction
// answers and what was accepted before lead to trust or to a refusal that says what to do; the
// old fingerprint of a changed key is found in plain and hashed known_hosts entries.
#include "transport/ssh/policysshinteraction.h"
#include "transport/ssh/sshhostkeyverifier.h"

#include <QCryptographicHash>
#include <QFile>
#include <QMessageAuthenticationCode>
#include <QMutex>
#include <QTemporaryDir>
#include <QTest>

#include <libssh/libssh.h>

using namespace rankdeck;
using Decision = SshInteraction::HostKeyDecision;
using Verdict = SshHostKeyVerifier::Verdict;
using Known = SshHostKeyVerifier::KnownHosts;

namespace {

// A fresh ed25519 public key as known_hosts writes it, with its fingerprint.
struct Key
{
    QByteArray base64;
    QString fingerprint;
};

Key generateKey()
{
    Key k;
    ssh_key key = nullptr;
    if (ssh_pki_generate(SSH_KEYTYPE_ED25519, 0, &key) != SSH_OK)
        return k;
    char *b64 = nullptr;
    if (ssh_pki_export_pubkey_base64(key, &b64) == SSH_OK) {
        k.base64 = b64;
        ssh_string_free_char(b64);
    }
    unsigned char *hash = nullptr;
    size_t len = 0;
    if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &len) == 0) {
        char *text = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, len);
        k.fingerprint = QString::fromLatin1(text);
        ssh_string_free_char(text);
        ssh_clean_pubkey_hash(&hash);
    }
    ssh_key_free(key);
    return k;
}

// The |1|salt|hmac form of a host name (HashKnownHosts yes).
QByteArray hashedName(const QByteArray &name)
{
    const QByteArray salt = QCryptographicHash::hash(name + "salt", QCryptographicHash::Sha1);
    const QByteArray mac = QMessageAuthenticationCode::hash(name, salt, QCryptographicHash::Sha1);
    return "|1|" + salt.toBase64() + '|' + mac.toBase64();
}

SshHostKeyVerifier::Server
server(const QString &knownHosts = QStringLiteral("/nonexistent/known_hosts"))
{
    SshHostKeyVerifier::Server s;
    s.host = QStringLiteral("node1");
    s.address = QStringLiteral("10.0.0.5");
    s.port = 2222;
    s.knownHostsFile = knownHosts;
    s.keyType = QStringLiteral("ssh-ed25519");
    s.fingerprint = QStringLiteral("SHA256:new");
    return s;
}

} // namespace

class TestSshHostKeyVerifier : public QObject
{
    Q_OBJECT

private slots:
    void knownHostsName();
    void matchingKeyIsTrustedWithoutAsking();
    void unknownKeyWithoutInteractionIsRefused();
    void unknownKeyFollowsTheAnswer_data();
    void unknownKeyFollowsTheAnswer();
    void keyAcceptedOnceIsNotAskedAgain();
    void changedKeyIsRefusedWithBothFingerprints_data();
    void changedKeyIsRefusedWithBothFingerprints();
    void knownFingerprintMatchesNameAndType();
};

void TestSshHostKeyVerifier::knownHostsName()
{
    QCOMPARE(SshHostKeyVerifier::knownHostsName(QStringLiteral("node"), 22),
             QStringLiteral("node"));
    QCOMPARE(SshHostKeyVerifier::knownHostsName(QStringLiteral("10.0.0.5"), 2222),
             QStringLiteral("[10.0.0.5]:2222"));
}

void TestSshHostKeyVerifier::matchingKeyIsTrustedWithoutAsking()
{
    PolicySshInteraction interaction(Decision::Reject);
    SshHostKeyVerifier verifier(&interaction, nullptr);
    QString error;
    QCOMPARE(verifier.decide(Known::Match, server(), &error), Verdict::Trust);
    QVERIFY(error.isEmpty());
    QVERIFY(interaction.hostKeyQuestions().isEmpty());
}

void TestSshHostKeyVerifier::unknownKeyWithoutInteractionIsRefused()
{
    SshHostKeyVerifier verifier(nullptr, nullptr);
    QString error;
    QCOMPARE(verifier.decide(Known::Unknown, server(), &error), Verdict::Refuse);
    QVERIFY2(error.contains(QStringLiteral("[10.0.0.5]:2222")), qPrintable(error));
    QVERIFY2(error.contains(QStringLiteral("SHA256:new")), qPrintable(error));
    QVERIFY2(error.contains(QStringLiteral("--accept-new-host-keys")), qPrintable(error));
}

void TestSshHostKeyVerifier::unknownKeyFollowsTheAnswer_data()
{
    QTest::addColumn<Decision>("answer");
    QTest::addColumn<Verdict>("verdict");
    QTest::newRow("reject") << Decision::Reject << Verdict::Refuse;
    QTest::newRow("once") << Decision::AcceptOnce << Verdict::Trust;
    QTest::newRow("remember") << Decision::AcceptAndRemember << Verdict::TrustAndRemember;
}

void TestSshHostKeyVerifier::unknownKeyFollowsTheAnswer()
{
    QFETCH(Decision, answer);
    QFETCH(Verdict, verdict);
    PolicySshInteraction interaction(answer);
    QMutex lock;
    SshHostKeyVerifier verifier(&interaction, &lock);
    QString error;
    QCOMPARE(verifier.decide(Known::Unknown, server(QStringLiteral("/tmp/kh")), &error), verdict);
    QCOMPARE(error.isEmpty(), verdict != Verdict::Refuse);
    const auto questions = interaction.hostKeyQuestions();
    QCOMPARE(questions.size(), 1);
    QCOMPARE(questions[0].host, QStringLiteral("node1"));
    QCOMPARE(questions[0].address, QStringLiteral("10.0.0.5"));
    QCOMPARE(questions[0].port, 2222);
    QCOMPARE(questions[0].keyType, QStringLiteral("ssh-ed25519"));
    QCOMPARE(questions[0].fingerprint, QStringLiteral("SHA256:new"));
    QCOMPARE(questions[0].knownHostsFile, QStringLiteral("/tmp/kh"));
    QVERIFY(lock.tryLock()); // released after the question
    lock.unlock();
}

void TestSshHostKeyVerifier::keyAcceptedOnceIsNotAskedAgain()
{
    PolicySshInteraction interaction(Decision::AcceptOnce);
    SshHostKeyVerifier verifier(&interaction, nullptr);
    QString error;
    QCOMPARE(verifier.decide(Known::Unknown, server(), &error), Verdict::Trust);
    QCOMPARE(verifier.decide(Known::Unknown, server(), &error), Verdict::Trust);
    QCOMPARE(interaction.hostKeyQuestions().size(), 1);
    // Another key is another question, and a refusal.
    interaction.setUnknownHostKeyDecision(Decision::Reject);
    SshHostKeyVerifier::Server other = server();
    other.fingerprint = QStringLiteral("SHA256:other");
    QCOMPARE(verifier.decide(Known::Unknown, other, &error), Verdict::Refuse);
    QCOMPARE(interaction.hostKeyQuestions().size(), 2);
}

void TestSshHostKeyVerifier::changedKeyIsRefusedWithBothFingerprints_data()
{
    QTest::addColumn<bool>("hashed");
    QTest::newRow("plain") << false;
    QTest::newRow("hashed") << true;
}

void TestSshHostKeyVerifier::changedKeyIsRefusedWithBothFingerprints()
{
    QFETCH(bool, hashed);
    const Key old = generateKey();
    QVERIFY(!old.base64.isEmpty() && !old.fingerprint.isEmpty());
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString knownHosts = dir.filePath(QStringLiteral("known_hosts"));
    QFile f(knownHosts);
    QVERIFY(f.open(QIODevice::WriteOnly));
    const QByteArray name = "[10.0.0.5]:2222";
    f.write("# a comment\n");
    f.write("[10.0.0.6]:2222 ssh-ed25519 " + generateKey().base64 + '\n');
    f.write((hashed ? hashedName(name) : "other," + name) + " ssh-ed25519 " + old.base64 + '\n');
    f.close();

    PolicySshInteraction interaction(Decision::AcceptAndRemember);
    SshHostKeyVerifier verifier(&interaction, nullptr);
    QString error;
    QCOMPARE(verifier.decide(Known::Changed, server(knownHosts), &error), Verdict::Refuse);
    QVERIFY(interaction.hostKeyQuestions().isEmpty());
    QVERIFY2(error.contains(QStringLiteral("CHANGED")), qPrintable(error));
    QVERIFY2(error.contains(old.fingerprint), qPrintable(error));
    QVERIFY2(error.contains(QStringLiteral("SHA256:new")), qPrintable(error));
    QVERIFY2(
        error.contains(QStringLiteral("ssh-keygen -R '[10.0.0.5]:2222' -f '%1'").arg(knownHosts)),
        qPrintable(error));
}

void TestSshHostKeyVerifier::knownFingerprintMatchesNameAndType()
{
    const Key key = generateKey();
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString knownHosts = dir.filePath(QStringLiteral("known_hosts"));
    QFile f(knownHosts);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("@revoked node ssh-ed25519 " + generateKey().base64 + '\n');
    f.write("node ssh-ed25519 " + key.base64 + '\n');
    f.close();
    QCOMPARE(SshHostKeyVerifier::knownFingerprint(knownHosts, QStringLiteral("node"),
                                                  QStringLiteral("ssh-ed25519")),
             key.fingerprint);
    QVERIFY(SshHostKeyVerifier::knownFingerprint(knownHosts, QStringLiteral("node"),
                                                 QStringLiteral("ssh-rsa"))
                .isEmpty());
    QVERIFY(SshHostKeyVerifier::knownFingerprint(knownHosts, QStringLiteral("nod"),
                                                 QStringLiteral("ssh-ed25519"))
                .isEmpty());
    QVERIFY(SshHostKeyVerifier::knownFingerprint(dir.filePath(QStringLiteral("missing")),
                                                 QStringLiteral("node"),
                                                 QStringLiteral("ssh-ed25519"))
                .isEmpty());
}

QTEST_GUILESS_MAIN(TestSshHostKeyVerifier)
#include "tst_sshhostkeyverifier.moc"
