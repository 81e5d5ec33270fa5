// SPDX-License-Identifier: GPL-3.0-or-later
#include "diagnosis/failuregrouping.h"

#include "util/translation.h"

#include <QHash>
#include <QRegularExpression>

#include <algorithm>

namespace rankdeck {

namespace {

QString withoutNumbers(const QString &text)
{
    static const QRegularExpression numbers(QStringLiteral(R"(0x[0-9a-fA-F]+|\d+)"));
    QString s = text.left(2000);
    s.replace(numbers, QStringLiteral("#"));
    return s;
}

void addFrames(QString &key, const QList<PythonFrame> &frames)
{
    for (const PythonFrame &f : frames)
        key += f.file + QLatin1Char(':') + QString::number(f.line) + QLatin1Char(';');
}

} // namespace

QString formatRankRanges(QList<int> ranks)
{
    std::sort(ranks.begin(), ranks.end());
    ranks.resize(std::unique(ranks.begin(), ranks.end()) - ranks.begin());
    QStringList parts;
    for (qsizetype i = 0; i < ranks.size();) {
        qsizetype j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
            ++j;
        if (j == i)
            parts << QString::number(ranks[i]);
        else
            parts << QStringLiteral("%1–%2").arg(ranks[i]).arg(ranks[j]);
        i = j + 1;
    }
    return parts.join(QStringLiteral(", "));
}

QString formatRankList(const QList<int> &ranks)
{
    return (ranks.size() == 1 ? tr("rank %1") : tr("ranks %1")).arg(formatRankRanges(ranks));
}

QString failureSignature(const RankFailure &f)
{
    const QChar sep(0x1f); // no part of a failure holds a unit separator
    QString key = f.kind + sep + QString::number(f.signal) + sep + QString::number(f.exitCode) +
                  sep + f.exceptionType + sep + withoutNumbers(f.message) + sep +
                  withoutNumbers(f.reason) + sep;
    for (const PythonException &e : f.python) {
        key += e.type + QLatin1Char('@');
        addFrames(key, e.frames);
    }
    key += sep;
    if (const PythonThreadStack *t = f.pythonDump.currentThread())
        addFrames(key, t->frames);
    key += sep;
    for (const QString &line : f.stack) {
        const FrameParts p = parseFrame(line);
        key += (p.index >= 0 ? p.function + QLatin1Char('@') + p.module : withoutNumbers(line)) +
               QLatin1Char(';');
    }
    return key;
}

bool sameAsRootCause(const RankFailure &other, const RankFailure &root)
{
    if (!other.python.isEmpty() || !root.python.isEmpty()) {
        if (other.python.size() != root.python.size())
            return false;
        for (qsizetype i = 0; i < root.python.size(); ++i) {
            const PythonException &a = other.python[i];
            const PythonException &b = root.python[i];
            if (a.type != b.type || a.chainedBy != b.chainedBy ||
                withoutNumbers(a.message) != withoutNumbers(b.message))
                return false;
            QString ka;
            QString kb;
            addFrames(ka, a.frames);
            addFrames(kb, b.frames);
            if (ka != kb)
                return false;
        }
        return true;
    }
    RankFailure a = other;
    RankFailure b = root;
    a.reason.clear();
    b.reason.clear();
    return failureSignature(a) == failureSignature(b);
}

QList<FailureGroup> FailureReport::groups() const
{
    QList<FailureGroup> out;
    const RankFailure *root = rootCause();
    if (root)
        out << FailureGroup{{root->rank}, *root};
    QHash<QString, qsizetype> index; // signature → group
    for (const RankFailure &f : failures) {
        if (&f == root)
            continue;
        const QString key = failureSignature(f);
        const auto it = index.constFind(key);
        if (it != index.cend()) {
            out[*it].ranks << f.rank;
            continue;
        }
        index.insert(key, out.size());
        out << FailureGroup{{f.rank}, f};
    }
    for (FailureGroup &g : out) {
        std::sort(g.ranks.begin(), g.ranks.end());
        g.sameAsRoot = root && &g != &out.first() && sameAsRootCause(g.representative, *root);
    }
    return out;
}

} // namespace rankdeck
