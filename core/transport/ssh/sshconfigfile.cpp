// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/ssh/sshconfigfile.h"

#include "util/shellquote.h"

#include <QRegularExpression>

namespace rankdeck::sshconfig {

std::optional<int> serverAliveInterval(QByteArrayView configText, const QString &host)
{
    static const QRegularExpression keySplit(QStringLiteral("[\\s=]"));
    static const QRegularExpression spaces(QStringLiteral("\\s+"));
    bool active = true;
    for (const QByteArray &rawLine : configText.toByteArray().split('\n')) {
        const QString line = QString::fromUtf8(rawLine).trimmed();
        if (line.isEmpty() || line.startsWith(QLatin1Char('#')))
            continue;
        const qsizetype split = line.indexOf(keySplit);
        const QString key = line.left(split).toLower();
        const QString value =
            split < 0 ? QString()
                      : line.mid(split + 1).trimmed().remove(QLatin1Char('=')).trimmed();
        if (key == QLatin1String("host")) {
            bool matched = false;
            bool negated = false;
            for (const QString &pattern : value.split(spaces, Qt::SkipEmptyParts)) {
                const bool negative = pattern.startsWith(QLatin1Char('!'));
                // Host names have no '/', so the path-aware default conversion fits.
                const QRegularExpression re(QRegularExpression::wildcardToRegularExpression(
                                                negative ? pattern.mid(1) : pattern),
                                            QRegularExpression::CaseInsensitiveOption);
                if (re.match(host).hasMatch())
                    (negative ? negated : matched) = true;
            }
            active = matched && !negated;
        } else if (key == QLatin1String("match")) {
            active = value.compare(QLatin1String("all"), Qt::CaseInsensitive) == 0;
        } else if (active && key == QLatin1String("serveraliveinterval")) {
            bool ok = false;
            const int seconds = value.toInt(&ok);
            return ok && seconds >= 0 ? seconds : -1;
        }
    }
    return std::nullopt;
}

std::optional<ProxyJumpChain> proxyJumpFromLibsshCommand(const QString &proxyCommand)
{
    static const QRegularExpression generated(
        QStringLiteral(R"(^ssh(?: -l (\S+))?(?: -p (\S+))?(?: -J (\S+))? -W '\[%h\]:%p' (\S+)$)"));
    const QRegularExpressionMatch m = generated.match(proxyCommand);
    if (!m.hasMatch())
        return std::nullopt;
    ProxyJumpChain chain;
    chain.firstUser = m.captured(1);
    chain.firstPort = m.captured(2);
    chain.firstHost = m.captured(4);
    QString first = chain.firstHost.contains(QLatin1Char(':'))
                        ? QStringLiteral("[%1]").arg(chain.firstHost)
                        : chain.firstHost;
    if (!chain.firstPort.isEmpty())
        first += QLatin1Char(':') + chain.firstPort;
    if (!chain.firstUser.isEmpty())
        first = chain.firstUser + QLatin1Char('@') + first;
    chain.hops = QStringList{first};
    if (!m.captured(3).isEmpty())
        chain.hops += m.captured(3).split(QLatin1Char(','), Qt::SkipEmptyParts);
    return chain;
}

QByteArray proxyJumpCommand(const QString &ssh, const QString &configPath,
                            const QString &stderrPath, const ProxyJumpChain &chain)
{
    // libssh expands %h, %p, … in the whole command afterwards; a literal % is written %%.
    const auto literal = [](QString text) {
        return shell::quote(text.replace(QLatin1Char('%'), QStringLiteral("%%")));
    };
    QStringList hops = chain.hops;
    QByteArrayList words{literal(ssh), "-F", literal(configPath)};
    const QString last = hops.isEmpty() ? chain.firstHost : hops.takeLast();
    if (!hops.isEmpty())
        words << "-J" << literal(hops.join(QLatin1Char(',')));
    words << "-W"
          << "'[%h]:%p'";
    if (hops.isEmpty()) {
        if (!chain.firstUser.isEmpty())
            words << "-l" << literal(chain.firstUser);
        if (!chain.firstPort.isEmpty())
            words << "-p" << literal(chain.firstPort);
        words << "--" << literal(chain.firstHost);
    } else {
        words << "--"
              << literal(last.startsWith(QLatin1String("ssh://"))
                             ? last
                             : QStringLiteral("ssh://") + last);
    }
    words << "2>" + literal(stderrPath);
    return words.join(' ');
}

} // namespace rankdeck::sshconfig
