// SPDX-License-Identifier: GPL-3.0-or-later
#include "stream/progressbarline.h"

#include <QRegularExpression>

#include <limits>

namespace rankdeck {

namespace {

constexpr qsizetype kMaxBarText = 4096;

// tqdm's default format: "{desc}: {percentage}%|{bar}| {n}/{total} [{elapsed}<{remaining},
// {rate}{postfix}]", the percentage and the description optional, total "?" when unknown.
const QRegularExpression &barPattern()
{
    static const QRegularExpression re(
        QStringLiteral(R"(^\s*(.*?)(?::\s*)?(?:\d{1,3}%)?\|[^|]*\|\s*(\d{1,15})/(\d{1,15}|\?))"
                       R"(\s*\[([^\[\]]*)\]\s*$)"));
    return re;
}

// Without a total tqdm draws no bar: "{desc}: {n}it [{elapsed}, {rate}{postfix}]".
const QRegularExpression &counterPattern()
{
    static const QRegularExpression re(
        QStringLiteral(R"(^\s*(.*?)(?::\s*)?(\d{1,15})it\s*\[([^\[\]]*)\]\s*$)"));
    return re;
}

const QRegularExpression &epochPattern()
{
    static const QRegularExpression re(QStringLiteral(R"((?<![\w.])epoch\s*[:#]?\s*(\d{1,9}))"),
                                       QRegularExpression::CaseInsensitiveOption);
    return re;
}

// The elapsed time and the rate come first in the brackets; what follows is the postfix.
QString postfixOf(const QString &inner)
{
    const QStringList items = inner.split(QStringLiteral(", "));
    if (items.size() <= 2)
        return QString();
    return items.mid(2).join(QStringLiteral(", ")).trimmed();
}

} // namespace

std::optional<ProgressBarLine> ProgressBarLine::parse(const QString &text)
{
    if (text.size() > kMaxBarText || !text.contains(u'[') || !text.trimmed().endsWith(u']'))
        return std::nullopt;
    ProgressBarLine bar;
    QString inner;
    if (text.contains(u'|')) {
        const QRegularExpressionMatch m = barPattern().match(text);
        if (!m.hasMatch())
            return std::nullopt;
        bar.description = m.captured(1).trimmed();
        bar.n = m.captured(2).toLongLong();
        bar.total = m.captured(3) == u'?' ? -1 : m.captured(3).toLongLong();
        inner = m.captured(4);
    } else {
        const QRegularExpressionMatch m = counterPattern().match(text);
        if (!m.hasMatch())
            return std::nullopt;
        bar.description = m.captured(1).trimmed();
        bar.n = m.captured(2).toLongLong();
        inner = m.captured(3);
    }
    // The brackets hold an elapsed time ("00:00", "1:02:03") before anything else.
    if (!inner.isEmpty() && !inner.front().isDigit())
        return std::nullopt;
    if (bar.description.endsWith(u':'))
        bar.description.chop(1);
    bar.postfix = postfixOf(inner);
    const QRegularExpressionMatch e = epochPattern().match(bar.description);
    if (e.hasMatch())
        bar.epoch = e.captured(1).toInt();
    bar.key = bar.description;
    for (QChar &c : bar.key) {
        if (c.isDigit())
            c = u'#';
    }
    return bar;
}

std::optional<ProgressBarLine> ProgressBarLine::parseLeading(const QString &text,
                                                             qsizetype *textFrom)
{
    // tqdm's brackets hold its elapsed time and rate ("?it/s", "1.2s/it"): without them, no bar.
    if (text.size() > kMaxBarText ||
        (!text.contains(QLatin1String("it/s")) && !text.contains(QLatin1String("s/it"))))
        return std::nullopt;
    // The bar's bracket holds no other: it ends at the first ']' after a '['. A description may
    // have brackets of its own, so a few are tried, each with one anchored match.
    qsizetype open = text.indexOf(u'[');
    for (int tries = 0; open >= 0 && tries < 4; ++tries) {
        const qsizetype close = text.indexOf(u']', open);
        if (close < 0 || close + 1 >= text.size())
            return std::nullopt;
        if (std::optional<ProgressBarLine> bar = parse(text.left(close + 1))) {
            *textFrom = close + 1;
            return bar;
        }
        open = text.indexOf(u'[', close);
    }
    return std::nullopt;
}

QList<QPair<QString, double>> ProgressBarLine::postfixValues() const
{
    QList<QPair<QString, double>> out;
    if (postfix.isEmpty())
        return out;
    for (const QString &item : postfix.split(QStringLiteral(", "))) {
        const qsizetype eq = item.indexOf(u'=');
        if (eq <= 0)
            continue;
        const QString name = item.left(eq).trimmed().toLower();
        const QString value = item.mid(eq + 1).trimmed();
        if (name.isEmpty() || name.contains(u' '))
            continue;
        bool ok = false;
        double v = value.toDouble(&ok);
        if (!ok) {
            const QString l = value.toLower();
            if (l == u"nan")
                v = std::numeric_limits<double>::quiet_NaN(), ok = true;
            else if (l == u"inf" || l == u"+inf")
                v = std::numeric_limits<double>::infinity(), ok = true;
            else if (l == u"-inf")
                v = -std::numeric_limits<double>::infinity(), ok = true;
        }
        if (ok)
            out.append({name, v});
    }
    return out;
}

} // namespace rankdeck
