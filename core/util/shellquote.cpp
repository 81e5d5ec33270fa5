// SPDX-License-Identifier: GPL-3.0-or-later
#include "util/shellquote.h"

#include <QRegularExpression>

namespace rankdeck::shell {

QByteArray quote(const QByteArray &word)
{
    QByteArray out;
    out.reserve(word.size() + 2);
    out += '\'';
    for (char c : word) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    out += '\'';
    return out;
}

QByteArray quote(const QString &word)
{
    return quote(word.toUtf8());
}

QString readable(const QStringList &words)
{
    // What no POSIX shell treats specially, anywhere in a word.
    static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9_@%+=:,./-]+$"));
    QStringList out;
    out.reserve(words.size());
    for (const QString &w : words)
        out << (plain.match(w).hasMatch() ? w : QString::fromUtf8(quote(w)));
    return out.join(QLatin1Char(' '));
}

QByteArray quoteAll(const QStringList &words)
{
    QByteArray out;
    for (const QString &w : words) {
        if (!out.isEmpty())
            out += ' ';
        out += quote(w);
    }
    return out;
}

bool isValidVariableName(const QString &name)
{
    if (name.isEmpty())
        return false;
    for (int i = 0; i < name.size(); ++i) {
        const QChar c = name.at(i);
        const bool alpha = (c >= u'A' && c <= u'Z') || (c >= u'a' && c <= u'z') || c == u'_';
        const bool digit = c >= u'0' && c <= u'9';
        if (!alpha && !(digit && i > 0))
            return false;
    }
    return true;
}

} // namespace rankdeck::shell
