// SPDX-License-Identifier: GPL-3.0-or-later
#include "config/gitignorematcher.h"

namespace rankdeck {

QString GitIgnoreMatcher::patternToRegex(const QString &p, bool anchored)
{
    QString rx = anchored ? QStringLiteral("^") : QStringLiteral("^(?:.*/)?");
    const qsizetype n = p.size();
    for (qsizetype i = 0; i < n; ++i) {
        const QChar c = p[i];
        if (c == QLatin1Char('*') && i + 1 < n && p[i + 1] == QLatin1Char('*') &&
            (i == 0 || p[i - 1] == QLatin1Char('/'))) {
            // "**/" at the start or after a '/': any number of directories, none included;
            // "/**" at the end: everything inside.
            if (i + 2 == n) {
                rx += QStringLiteral(".*");
                i += 1;
                continue;
            }
            if (p[i + 2] == QLatin1Char('/')) {
                rx += QStringLiteral("(?:.*/)?");
                i += 2;
                continue;
            }
        }
        if (c == QLatin1Char('*')) {
            rx += QStringLiteral("[^/]*");
        } else if (c == QLatin1Char('?')) {
            rx += QStringLiteral("[^/]");
        } else if (c == QLatin1Char('\\') && i + 1 < n) {
            rx += QRegularExpression::escape(QString(p[++i]));
        } else if (c == QLatin1Char('[')) {
            const qsizetype close = p.indexOf(QLatin1Char(']'), i + 2);
            if (close < 0) {
                rx += QStringLiteral("\\[");
                continue;
            }
            QString cls = QStringLiteral("[");
            qsizetype j = i + 1;
            if (p[j] == QLatin1Char('!') || p[j] == QLatin1Char('^')) {
                cls += QLatin1Char('^');
                ++j;
            }
            for (; j < close; ++j) {
                const QChar k = p[j];
                if (k == QLatin1Char('\\') || k == QLatin1Char('[') || k == QLatin1Char('^'))
                    cls += QLatin1Char('\\');
                cls += k;
            }
            rx += cls + QLatin1Char(']');
            i = close;
        } else {
            rx += QRegularExpression::escape(QString(c));
        }
    }
    return rx + QLatin1Char('$');
}

void GitIgnoreMatcher::addRules(const QString &base, const QString &text)
{
    const QStringList lines = text.split(QLatin1Char('\n'));
    for (QString line : lines) {
        if (line.endsWith(QLatin1Char('\r')))
            line.chop(1);
        // Trailing spaces go unless the last one is escaped.
        while (line.endsWith(QLatin1Char(' ')) && !line.endsWith(QLatin1String("\\ ")))
            line.chop(1);
        if (line.isEmpty() || line.startsWith(QLatin1Char('#')))
            continue;
        Rule rule;
        rule.base = base;
        if (line.startsWith(QLatin1Char('!'))) {
            rule.negated = true;
            line.remove(0, 1);
        }
        if (line.endsWith(QLatin1Char('/')) && !line.endsWith(QLatin1String("\\/"))) {
            rule.directoryOnly = true;
            line.chop(1);
        }
        if (line.isEmpty())
            continue;
        // A '/' at the start or in the middle ties the pattern to the .gitignore's directory.
        const bool anchored = line.contains(QLatin1Char('/'));
        if (line.startsWith(QLatin1Char('/')))
            line.remove(0, 1);
        rule.regex = QRegularExpression(patternToRegex(line, anchored));
        if (!rule.regex.isValid())
            continue; // git ignores what it cannot parse too
        m_rules.append(rule);
    }
}

bool GitIgnoreMatcher::isIgnored(const QString &relPath, bool isDirectory) const
{
    bool ignored = false;
    for (const Rule &rule : m_rules) {
        if (rule.directoryOnly && !isDirectory)
            continue;
        if (ignored == !rule.negated)
            continue; // cannot change the outcome
        QString rest = relPath;
        if (!rule.base.isEmpty()) {
            if (!relPath.startsWith(rule.base + QLatin1Char('/')))
                continue;
            rest = relPath.mid(rule.base.size() + 1);
        }
        if (rule.regex.match(rest).hasMatch())
            ignored = !rule.negated;
    }
    return ignored;
}

} // namespace rankdeck
