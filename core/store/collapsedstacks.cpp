// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/collapsedstacks.h"

#include "util/translation.h"

#include <QFile>

namespace rankdeck {

bool CollapsedStacks::read(const QString &path, Counts *stacks, QString *error)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        *error = tr("cannot read %1: %2").arg(path, f.errorString());
        return false;
    }
    if (f.size() > kMaxBytes) {
        *error = tr("%1 is larger than %2 MB: not a profile RankDeck wrote")
                     .arg(path)
                     .arg(kMaxBytes >> 20);
        return false;
    }
    *stacks = parse(f.readAll());
    return true;
}

CollapsedStacks::Counts CollapsedStacks::parse(QByteArrayView text)
{
    Counts out;
    for (const QByteArrayView line : QByteArray(text.data(), text.size()).split('\n')) {
        const QByteArrayView trimmed = line.trimmed();
        const qsizetype space = trimmed.lastIndexOf(' ');
        if (space <= 0)
            continue;
        bool ok = false;
        const qint64 count = trimmed.sliced(space + 1).toLongLong(&ok);
        if (!ok || count <= 0)
            continue;
        out[QString::fromUtf8(trimmed.first(space))] += count;
    }
    return out;
}

CollapsedStacks::Counts CollapsedStacks::leaves(const Counts &stacks)
{
    Counts out;
    for (auto it = stacks.cbegin(); it != stacks.cend(); ++it)
        out[it.key().mid(it.key().lastIndexOf(QLatin1Char(';')) + 1)] += it.value();
    return out;
}

} // namespace rankdeck
