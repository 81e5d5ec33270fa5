// SPDX-License-Identifier: GPL-3.0-or-later
#include "config/profilestore.h"
#include "transport/slurm/slurmsettings.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace rankdeck;

class TestProfileStore : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;

    QString writeFile(const QString &name, const QByteArray &text)
    {
        QDir().mkpath(m_dir.path() + QStringLiteral("/profiles"));
        const QString path =
            m_dir.path() + QStringLiteral("/profiles/") + name + QStringLiteral(".toml");
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
            return {};
        f.write(text);
        return path;
    }

    ProfileStore store() const { return ProfileStore(m_dir.path() + QStringLiteral("/profiles")); }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void builtinLocalNeedsNoFile()
    {
        ProfileStore s(m_dir.path() + QStringLiteral("/empty"));
        QCOMPARE(s.names(), QStringList{QStringLiteral("local")});
        Profile p;
        QList<ProfileError> errors;
        QVERIFY(s.load(QStringLiteral("local"), &p, &errors));
        QVERIFY(p.isLocal());
        QCOMPARE(p.worldSize(), 2);
        QCOMPARE(p, Profile::builtinLocal(2));
        QCOMPARE(Profile::builtinLocal(5).worldSize(), 5);
    }

    void defaultDirectoryFollowsXdg()
    {
        const QByteArray old = qgetenv("XDG_CONFIG_HOME");
        qputenv("XDG_CONFIG_HOME", m_dir.path().toUtf8() + "/xdg");
        QCOMPARE(ProfileStore::defaultDirectory(),
                 m_dir.path() + QStringLiteral("/xdg/rankdeck/profiles"));
        QCOMPARE(ProfileStore().directory(),
                 m_dir.path() + QStringLiteral("/xdg/rankdeck/profiles"));
        qputenv("XDG_CONFIG_HOME", old);
    }

    void roundTrip_data()
    {
        QTest::addColumn<Profile>("profile");
        Profile local = Profile::builtinLocal(3);
        local.name = QStringLiteral("mylocal");
        QTest::newRow("local") << local;

        Profile ssh;
        ssh.name = QStringLiteral("cluster");
        ssh.transport = QStringLiteral("ssh");
        ssh.nodes = {ProfileNode{QStringLiteral("gpu-1"), 2222, QStringLiteral("alice"),
                                 QStringLiteral("~/.ssh/id_ed25519"), 4, 4},
                     ProfileNode{QStringLiteral("10.0.0.7"), 22, QString(), QString(), 4, 4}};
        ssh.rendezvousAddress = QStringLiteral("10.0.0.5");
        ssh.workerDirectory = QStringLiteral("/scratch/rankdeck");
        ssh.libtorchPath = QStringLiteral("python");
        ssh.backend = QStringLiteral("nccl");
        ssh.environment = {
            {QStringLiteral("NCCL_DEBUG"), QStringLiteral("INFO")},
            {QStringLiteral("WEIRD"), QStringLiteral("a \"quoted\" $(value); `x`\nnext line")}};
        ssh.connectTimeoutSec = 5;
        ssh.rendezvousTimeoutSec = 120;
        ssh.heartbeatTimeoutSec = 20;
        ssh.collectiveTimeoutSec = 900;
        ssh.orphanGraceSec = 12;
        ssh.metricPatterns = {QStringLiteral("tokens_per_s=([0-9.]+) tok/s"),
                              QStringLiteral("mfu=MFU \"?([0-9.]+)%")};
        ssh.warmPython = true;
        ssh.flightRecorder = false;
        QTest::newRow("ssh, two nodes, hostile env") << ssh;

        Profile slurm;
        slurm.name = QStringLiteral("hpc");
        slurm.transport = QStringLiteral("slurm");
        SlurmSettings settings;
        settings.login = QStringLiteral("login.example");
        settings.port = 2222;
        settings.user = QStringLiteral("alice");
        settings.identityFile = QStringLiteral("~/.ssh/id_ed25519");
        settings.partition = QStringLiteral("gpu");
        settings.account = QStringLiteral("proj42");
        settings.qos = QStringLiteral("high");
        settings.timeLimit = QStringLiteral("1-12:00:00");
        settings.nodes = 3;
        settings.nprocPerNode = 4;
        settings.gpusPerNode = 4;
        settings.cpusPerTask = 8;
        settings.sbatchArgs = {QStringLiteral("--exclusive"), QStringLiteral("--mem=0")};
        settings.sharedDir = QStringLiteral("/scratch/alice/rankdeck");
        settings.applyTo(&slurm);
        QTest::newRow("slurm, every field") << slurm;
        Profile plainSlurm;
        plainSlurm.name = QStringLiteral("slurm-here");
        plainSlurm.transport = QStringLiteral("slurm");
        SlurmSettings().applyTo(&plainSlurm);
        QTest::newRow("slurm, sbatch on this machine, defaults") << plainSlurm;
    }
    void roundTrip()
    {
        QFETCH(Profile, profile);
        ProfileStore s = store();
        QString error;
        QVERIFY2(s.save(profile, true, &error), qPrintable(error));
        Profile back;
        QList<ProfileError> errors;
        QVERIFY2(s.load(profile.name, &back, &errors), qPrintable(errors.value(0).toString()));
        QCOMPARE(back, profile);
        QVERIFY(s.names().contains(profile.name));
        // No silent replacement.
        QVERIFY(!s.save(profile, false, &error));
        QVERIFY(error.contains(profile.name));
    }

    void brokenFiles_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("field");
        const QByteArray head = "schema_version = 1\ntransport = \"ssh\"\n";
        QTest::newRow("syntax error") << QByteArray(head + "backend = \"gloo\n") << 3 << QString();
        QTest::newRow("port is a string")
            << QByteArray(head + "[[nodes]]\nhost = \"a\"\nport = \"22\"\n") << 5
            << QStringLiteral("nodes[0].port");
        QTest::newRow("port out of range")
            << QByteArray(head + "[[nodes]]\nhost = \"a\"\n[[nodes]]\nhost = \"b\"\nport = 70000\n")
            << 7 << QStringLiteral("nodes[1].port");
        QTest::newRow("unknown field (typo)")
            << QByteArray(head + "[[nodes]]\nhost = \"a\"\nrank_per_node = 2\n") << 5
            << QStringLiteral("nodes[0].rank_per_node");
        QTest::newRow("node without host")
            << QByteArray(head + "[[nodes]]\nport = 22\n") << 3 << QStringLiteral("nodes[0].host");
        QTest::newRow("bad transport")
            << QByteArray("schema_version = 1\ntransport = \"telnet\"\n[[nodes]]\nhost = \"a\"\n")
            << 2 << QStringLiteral("transport");
        QTest::newRow("newer schema") << QByteArray("schema_version = 7\n[[nodes]]\nhost = \"a\"\n")
                                      << 1 << QStringLiteral("schema_version");
        QTest::newRow("no schema version")
            << QByteArray("transport = \"local\"\n[[nodes]]\nhost = \"a\"\n") << 1
            << QStringLiteral("schema_version");
        QTest::newRow("bad env name")
            << QByteArray(head + "[environment]\n\"A-B\" = \"x\"\n[[nodes]]\nhost = \"a\"\n") << 4
            << QStringLiteral("environment.A-B");
        QTest::newRow("timeout not a number")
            << QByteArray(head + "[timeouts]\nheartbeat = \"soon\"\n[[nodes]]\nhost = \"a\"\n") << 4
            << QStringLiteral("timeouts.heartbeat");
        QTest::newRow("orphan grace of 0 s")
            << QByteArray(head + "[timeouts]\norphan_grace = 0\n[[nodes]]\nhost = \"a\"\n") << 4
            << QStringLiteral("timeouts.orphan_grace");
        QTest::newRow("nodes not tables")
            << QByteArray(head + "nodes = [1, 2]\n") << 3 << QStringLiteral("nodes[0]");
        QTest::newRow("metric pattern without a name")
            << QByteArray(
                   head +
                   "metrics = [\"tok=(\\\\d+)\", \"(\\\\d+) it/s\"]\n[[nodes]]\nhost = \"a\"\n")
            << 3 << QStringLiteral("metrics");
        QTest::newRow("metric regex does not compile")
            << QByteArray(head + "metrics = [\"acc=(\\\\d+\"]\n[[nodes]]\nhost = \"a\"\n") << 3
            << QStringLiteral("metrics");
        QTest::newRow("metric regex with two groups")
            << QByteArray(head + "metrics = [\"acc=(\\\\d+)/(\\\\d+)\"]\n[[nodes]]\nhost = \"a\"\n")
            << 3 << QStringLiteral("metrics");
        QTest::newRow("warm_python not a boolean")
            << QByteArray(head + "warm_python = \"yes\"\n[[nodes]]\nhost = \"a\"\n") << 3
            << QStringLiteral("warm_python");
        QTest::newRow("flight_recorder not a boolean")
            << QByteArray(head + "flight_recorder = \"off\"\n[[nodes]]\nhost = \"a\"\n") << 3
            << QStringLiteral("flight_recorder");
        QTest::newRow("metrics not a list")
            << QByteArray(head + "metrics = \"acc=(x)\"\n[[nodes]]\nhost = \"a\"\n") << 3
            << QStringLiteral("metrics");
        const QByteArray slurm = "schema_version = 1\ntransport = \"slurm\"\n";
        QTest::newRow("slurm: unknown field")
            << QByteArray(slurm + "[slurm]\nnodez = 2\n") << 4 << QStringLiteral("slurm.nodez");
        QTest::newRow("slurm: no nodes")
            << QByteArray(slurm + "[slurm]\nnodes = 0\n") << 4 << QStringLiteral("slurm.nodes");
        QTest::newRow("slurm: sbatch_args not a list")
            << QByteArray(slurm + "[slurm]\nsbatch_args = \"--exclusive\"\n") << 4
            << QStringLiteral("slurm.sbatch_args");
        // Hosts that reach ssh's command line or libssh: refused when the file is read, on the
        // host's own line, instead of "Hostname required" at connect.
        QTest::newRow("host with ;") << QByteArray(head + "[[nodes]]\nhost = \"a;touch /tmp/x\"\n")
                                     << 4 << QStringLiteral("nodes[0].host");
        QTest::newRow("host with newline") << QByteArray(head + "[[nodes]]\nhost = \"a\\nb\"\n")
                                           << 4 << QStringLiteral("nodes[0].host");
        QTest::newRow("host with leading -")
            << QByteArray(head + "[[nodes]]\nhost = \"-oProxyCommand=x\"\n") << 4
            << QStringLiteral("nodes[0].host");
        QTest::newRow("host with space") << QByteArray(head + "[[nodes]]\nhost = \"a b\"\n") << 4
                                         << QStringLiteral("nodes[0].host");
        QTest::newRow("second node's host with $")
            << QByteArray(head +
                          "[[nodes]]\nhost = \"a\"\n[[nodes]]\nport = 22\nhost = \"$(id)\"\n")
            << 7 << QStringLiteral("nodes[1].host");
        QTest::newRow("user with leading -")
            << QByteArray(head + "[[nodes]]\nhost = \"a\"\nuser = \"-l\"\n") << 5
            << QStringLiteral("nodes[0].user");
        QTest::newRow("binary garbage")
            << QByteArray("schema_version = 1\n\x01\x02\xff\xfe\n") << 2 << QString();
    }
    void brokenFiles()
    {
        QFETCH(QByteArray, text);
        QFETCH(int, line);
        QFETCH(QString, field);
        const QString path = writeFile(QStringLiteral("broken"), text);
        QVERIFY(!path.isEmpty());
        ProfileStore s = store();
        Profile p;
        QList<ProfileError> errors;
        QVERIFY(!s.load(QStringLiteral("broken"), &p, &errors));
        QVERIFY(!errors.isEmpty());
        bool found = false;
        for (const ProfileError &e : errors) {
            QCOMPARE(e.file, path);
            if (e.line == line && (field.isEmpty() || e.field == field)) {
                found = true;
                // The message names file:line and the field, the way editors link to it.
                QVERIFY(e.toString().startsWith(path + QLatin1Char(':') + QString::number(line) +
                                                QStringLiteral(": ") + field));
            }
        }
        if (!found) {
            for (const ProfileError &e : errors)
                qWarning() << e.toString();
        }
        QVERIFY(found);

        // Never overwritten, not even with overwrite allowed.
        Profile replacement = Profile::builtinLocal(1);
        replacement.name = QStringLiteral("broken");
        QString error;
        QVERIFY(!s.save(replacement, true, &error));
        QVERIFY(error.contains(path));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), text);
        // The list still shows it, so the user can fix it.
        QVERIFY(s.names().contains(QStringLiteral("broken")));
    }

    void hostProblemNamesHostAndProfile()
    {
        writeFile(QStringLiteral("hosts"), "schema_version = 1\ntransport = \"ssh\"\n[[nodes]]\n"
                                           "host = \"gpu1;reboot\"\n");
        Profile p;
        QList<ProfileError> errors;
        QVERIFY(!store().load(QStringLiteral("hosts"), &p, &errors));
        QCOMPARE(errors.size(), 1);
        const QString msg = errors.first().toString();
        QVERIFY2(msg.contains(QStringLiteral("\"gpu1;reboot\"")) &&
                     msg.contains(QStringLiteral("';'")) &&
                     msg.contains(QStringLiteral("profile \"hosts\"")),
                 qPrintable(msg));
    }

    void goodHostsPass_data()
    {
        QTest::addColumn<QString>("host");
        for (const char *h : {"gpu-a", "node_1.cluster.example.org", "127.0.0.2", "::1",
                              "[fe80::1%eth0]", "dgx01", "rechner-ä"})
            QTest::newRow(h) << QString::fromUtf8(h);
    }
    void goodHostsPass()
    {
        QFETCH(QString, host);
        QVERIFY2(ProfileStore::hostProblem(host).isEmpty(),
                 qPrintable(ProfileStore::hostProblem(host)));
    }

    void oversizedFileIsRejected()
    {
        // Valid TOML however it were cut: the first node at the start, padding, the second node
        // beyond 4 MiB. Cutting it would load one node and say nothing.
        QByteArray text = "schema_version = 1\ntransport = \"ssh\"\n[[nodes]]\nhost = \"a\"\n";
        text += "# " + QByteArray(ProfileStore::kMaxFileBytes, 'p') + "\n";
        text += "[[nodes]]\nhost = \"b\"\n";
        writeFile(QStringLiteral("huge"), text);
        Profile p;
        QList<ProfileError> errors;
        QVERIFY(!store().load(QStringLiteral("huge"), &p, &errors));
        QCOMPARE(errors.size(), 1);
        QVERIFY2(errors.first().message.contains(QStringLiteral("4 MiB")),
                 qPrintable(errors.first().toString()));
        // Exactly at the limit still loads.
        QByteArray atLimit = "schema_version = 1\ntransport = \"ssh\"\n[[nodes]]\nhost = \"a\"\n# ";
        atLimit += QByteArray(ProfileStore::kMaxFileBytes - atLimit.size() - 1, 'p') + "\n";
        QCOMPARE(atLimit.size(), ProfileStore::kMaxFileBytes);
        writeFile(QStringLiteral("huge"), atLimit);
        errors.clear();
        QVERIFY(store().load(QStringLiteral("huge"), &p, &errors));
        QCOMPARE(p.nodes.size(), 1);
    }

    void everyProblemIsReported()
    {
        writeFile(
            QStringLiteral("many"),
            "schema_version = 1\nbackend = \"mpi\"\n[[nodes]]\nhost = \"a\"\nport = 0\ngpus = 2\n");
        Profile p;
        QList<ProfileError> errors;
        QVERIFY(!store().load(QStringLiteral("many"), &p, &errors));
        QStringList fields;
        for (const ProfileError &e : errors)
            fields << e.field;
        QVERIFY(fields.contains(QStringLiteral("backend")));
        QVERIFY(fields.contains(QStringLiteral("nodes[0].port")));
        QVERIFY(fields.contains(QStringLiteral("nodes[0].gpus")));
    }

    void invalidNamesAndRemove()
    {
        ProfileStore s = store();
        Profile p;
        QList<ProfileError> errors;
        QVERIFY(!s.load(QStringLiteral("../etc/passwd"), &p, &errors));
        QVERIFY(!s.load(QStringLiteral("nope"), &p, &errors));
        QVERIFY(errors.last().message.contains(QStringLiteral("no such profile")));
        Profile bad = Profile::builtinLocal(1);
        bad.name = QStringLiteral("a/b");
        QString error;
        QVERIFY(!s.save(bad, false, &error));
        bad.name = QStringLiteral("gone");
        QVERIFY(s.save(bad, false, &error));
        QVERIFY(s.exists(QStringLiteral("gone")));
        QVERIFY(s.remove(QStringLiteral("gone"), &error));
        QVERIFY(!s.exists(QStringLiteral("gone")));
        QVERIFY(!s.remove(QStringLiteral("gone"), &error));
        QVERIFY(!s.remove(QStringLiteral("local"), &error));
    }

    void slurmValuesAreChecked_data()
    {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("message");
        QTest::newRow("time") << QStringLiteral("time") << QStringLiteral("soon")
                              << QStringLiteral("not a Slurm time limit");
        QTest::newRow("partition with a space")
            << QStringLiteral("partition") << QStringLiteral("gpu a")
            << QStringLiteral("not a valid name");
        QTest::newRow("login with a quote") << QStringLiteral("login") << QStringLiteral("a'b")
                                            << QStringLiteral("not a valid name");
        QTest::newRow("sbatch option RankDeck sets")
            << QStringLiteral("sbatch_args") << QStringLiteral("--ntasks-per-node=3")
            << QStringLiteral("--ntasks-per-node is set by RankDeck");
        QTest::newRow("sbatch word that is no option")
            << QStringLiteral("sbatch_args") << QStringLiteral("exclusive")
            << QStringLiteral("not an sbatch option");
        // Issue 29: each of these is written into a "#SBATCH …" line of the batch script, where
        // a newline turns the rest of the value into a command of the job.
        QTest::newRow("sbatch option with a newline")
            << QStringLiteral("sbatch_args") << QStringLiteral("--comment=x\ntouch /tmp/pwned")
            << QStringLiteral("a control character (U+000a)");
        QTest::newRow("shared_dir with a newline")
            << QStringLiteral("shared_dir") << QStringLiteral("/shared/x\ntouch /tmp/pwned")
            << QStringLiteral("a control character (U+000a)");
        QTest::newRow("partition with a control character")
            << QStringLiteral("partition") << QStringLiteral("gpu\x01")
            << QStringLiteral("a control character (U+0001)");
        // '$' matches before a last newline too: the patterns end at \z.
        QTest::newRow("time with a newline at the end")
            << QStringLiteral("time") << QStringLiteral("1:00:00\n")
            << QStringLiteral("not a Slurm time limit");
    }
    void slurmValuesAreChecked()
    {
        QFETCH(QString, field);
        QFETCH(QString, value);
        QFETCH(QString, message);
        Profile p;
        p.name = QStringLiteral("hpc");
        p.transport = QStringLiteral("slurm");
        SlurmSettings slurm;
        if (field == QLatin1String("time"))
            slurm.timeLimit = value;
        else if (field == QLatin1String("partition"))
            slurm.partition = value;
        else if (field == QLatin1String("login"))
            slurm.login = value;
        else if (field == QLatin1String("shared_dir"))
            slurm.sharedDir = value;
        else
            slurm.sbatchArgs = {value};
        slurm.applyTo(&p);
        const QList<ProfileError> errors = ProfileStore::validate(p);
        QCOMPARE(errors.size(), 1);
        QCOMPARE(errors.first().field, QStringLiteral("slurm.") + field);
        QVERIFY2(errors.first().message.contains(message), qPrintable(errors.first().message));
        // A slurm profile with [[nodes]] is refused: Slurm chooses them.
        QList<ProfileError> parseErrors;
        Profile parsed;
        QVERIFY(!ProfileStore::parse(
            QStringLiteral("schema_version = 1\ntransport = \"slurm\"\n[[nodes]]\nhost = \"a\"\n"),
            QStringLiteral("x.toml"), &parsed, &parseErrors));
        QCOMPARE(parseErrors.value(0).field, QStringLiteral("nodes"));
    }

    // Every field refuses control characters, naming the field (issue 29, problem 6).
    void controlCharactersInEveryField_data()
    {
        QTest::addColumn<QString>("field");
        for (const char *f : {"name", "worker_directory", "libtorch_path", "metric_patterns",
                              "nodes[0].identity_file"})
            QTest::newRow(f) << QString::fromLatin1(f);
    }
    void controlCharactersInEveryField()
    {
        QFETCH(QString, field);
        Profile p = Profile::builtinLocal(1);
        p.transport = QStringLiteral("ssh");
        p.nodes[0].host = QStringLiteral("gpu1");
        const QString bad = QStringLiteral("x\ny\u0085");
        if (field == QLatin1String("name"))
            p.name = bad;
        else if (field == QLatin1String("worker_directory"))
            p.workerDirectory = bad;
        else if (field == QLatin1String("libtorch_path"))
            p.libtorchPath = bad;
        else if (field == QLatin1String("metric_patterns"))
            p.metricPatterns = {bad};
        else if (field == QLatin1String("nodes[0].identity_file"))
            p.nodes[0].identityFile = bad;
        QStringList fields;
        for (const ProfileError &e : ProfileStore::validate(p))
            fields << e.field + QStringLiteral(": ") + e.message;
        QVERIFY2(fields.size() >= 1 && fields.filter(field + QStringLiteral(": ")).size() == 1,
                 qPrintable(fields.join(u'\n')));
        QVERIFY(fields.join(u' ').contains(QStringLiteral("U+000a")));
        QVERIFY(!fields.join(u' ').contains(u'\n'));
    }

    void namesEndAtTheEnd()
    {
        // '$' would accept these: it matches before a final newline.
        QVERIFY(ProfileStore::isValidName(QStringLiteral("gpu")));
        QVERIFY(!ProfileStore::isValidName(QStringLiteral("gpu\n")));
    }

    void validateCatchesProgrammaticMistakes()
    {
        Profile p = Profile::builtinLocal(2);
        p.nodes[0].port = 0;
        p.nodes[0].ranksPerNode = 0;
        p.heartbeatTimeoutSec = 0;
        const QList<ProfileError> errors = ProfileStore::validate(p);
        QStringList fields;
        for (const ProfileError &e : errors)
            fields << e.field;
        QCOMPARE(fields, (QStringList{QStringLiteral("nodes[0].port"),
                                      QStringLiteral("nodes[0].ranks_per_node"),
                                      QStringLiteral("timeouts.heartbeat")}));
    }
};

QTEST_GUILESS_MAIN(TestProfileStore)
#include "tst_profilestore.moc"
