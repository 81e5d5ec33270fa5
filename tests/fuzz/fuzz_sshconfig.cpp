// SPDX-License-Identifier: GPL-3.0-or-later
//
// ~/.ssh/config as SshSession reads it: libssh's own parser (through a file, as connect() does),
// then what RankDeck takes out of it itself (sshconfig::): ServerAliveInterval, and the ProxyJump
// chain in the ProxyCommand libssh made, rebuilt into the OpenSSH command that runs instead.
// Promises checked: nothing crashes; a chain has a hop per jump host; the command quotes every
// word (no byte of the config can end a quote and start a shell command).
// Input: [host selector] then the config text.
#include "fuzzinput.h"

#include "transport/ssh/sshconfigfile.h"

#include <QFile>
#include <QTemporaryDir>

#include <libssh/libssh.h>

using namespace rankdeck;

namespace {

QString option(ssh_session session, ssh_options_e which)
{
    char *value = nullptr;
    if (ssh_options_get(session, which, &value) != SSH_OK || !value)
        return {};
    const QString out = QString::fromUtf8(value);
    ssh_string_free_char(value);
    return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    static QTemporaryDir dir;
    fuzz::FuzzInput in(data, size);
    static const char *const hosts[] = {"node1", "gpu-07.cluster", "10.0.0.5", "*", ""};
    const QString host = QString::fromLatin1(hosts[in.byte() % 5]);
    const QByteArrayView config = in.rest();

    const std::optional<int> interval = sshconfig::serverAliveInterval(config, host);
    FUZZ_CHECK(!interval || *interval >= -1);

    // `Match exec` runs a command while parsing and `Include` reads other files of this machine:
    // neither is RankDeck's code, and a fuzzer must not run what it makes up.
    if (config.toByteArray().toLower().contains("exec") ||
        config.toByteArray().toLower().contains("include"))
        return 0;
    const QString path = dir.filePath(QStringLiteral("config"));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return 0;
    file.write(config.data(), config.size());
    file.close();

    ssh_session session = ssh_new();
    if (!session)
        return 0;
    const QByteArray hostBytes = host.isEmpty() ? QByteArray("node1") : host.toUtf8();
    ssh_options_set(session, SSH_OPTIONS_HOST, hostBytes.constData());
    ssh_options_parse_config(session, QFile::encodeName(path).constData());
    const QString proxyCommand = option(session, SSH_OPTIONS_PROXYCOMMAND);
    ssh_free(session);

    for (const QString &command :
         {proxyCommand, QString::fromUtf8(config).section(QLatin1Char('\n'), 0, 0)}) {
        const std::optional<sshconfig::ProxyJumpChain> chain =
            sshconfig::proxyJumpFromLibsshCommand(command);
        if (!chain)
            continue;
        FUZZ_CHECK(!chain->hops.isEmpty());
        const QByteArray built = sshconfig::proxyJumpCommand(
            QStringLiteral("/usr/bin/ssh"), QStringLiteral("/tmp/x y/ssh_config"),
            QStringLiteral("/tmp/x y/stderr.log"), *chain);
        // Outside single quotes only the words RankDeck itself writes may appear.
        // shell::quote writes a ' inside a word as '\'' : an escaped quote between two quoted runs.
        QByteArray unquoted;
        bool quoted = false;
        for (qsizetype i = 0; i < built.size(); ++i) {
            const char c = built[i];
            if (c == '\'') {
                quoted = !quoted;
            } else if (!quoted && c == '\\' && i + 1 < built.size() && built[i + 1] == '\'') {
                ++i;
            } else if (!quoted) {
                unquoted += c;
            }
        }
        FUZZ_CHECK(!quoted);
        for (const QByteArray &word : unquoted.split(' '))
            FUZZ_CHECK(word.isEmpty() || word == "-F" || word == "-J" || word == "-W" ||
                       word == "-l" || word == "-p" || word == "--" || word == "[%h]:%p" ||
                       word == "2>");
    }
    return 0;
}
