// SPDX-License-Identifier: GPL-3.0-or-later
#include "config/profilenode.h"

#include "util/translation.h"

namespace rankdeck {

namespace {

bool parsePort(const QString &text, int *port)
{
    bool ok = false;
    const int v = text.toInt(&ok);
    if (!ok || v < 1 || v > 65535)
        return false;
    *port = v;
    return true;
}

} // namespace

bool parseHostPort(const QString &spec, QString *host, int *port, QString *why)
{
    *host = spec;
    const int colon = spec.lastIndexOf(QLatin1Char(':'));
    if (colon > 0 && spec.count(QLatin1Char(':')) == 1) {
        if (!parsePort(spec.mid(colon + 1), port)) {
            *why = tr("\"%1\" is not a port").arg(spec.mid(colon + 1));
            return false;
        }
        *host = spec.left(colon);
    } else if (spec.startsWith(QLatin1Char('[')) && spec.contains(QStringLiteral("]:"))) {
        const int close = spec.indexOf(QStringLiteral("]:"));
        if (!parsePort(spec.mid(close + 2), port)) {
            *why = tr("not a port");
            return false;
        }
        *host = spec.mid(1, close - 1);
    }
    if (host->isEmpty()) {
        *why = tr("missing host");
        return false;
    }
    return true;
}

} // namespace rankdeck
