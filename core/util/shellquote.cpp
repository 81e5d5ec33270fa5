// SPDX-License-Identifier: GPL-3.0-or-later
#include "util/shellquote.h"

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
