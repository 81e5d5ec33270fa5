// SPDX-License-Identifier: GPL-3.0-or-later
#include "config/metricpattern.h"

#include "util/translation.h"

namespace rankdeck {

bool parseMetricPattern(const QString &spec, MetricPattern *pattern, QString *error)
{
    const qsizetype eq = spec.indexOf(QLatin1Char('='));
    const QString name = eq < 0 ? QString() : spec.left(eq).trimmed();
    static const QRegularExpression validName(QStringLiteral(R"(^[A-Za-z_][A-Za-z0-9_./-]*\z)"));
    if (eq < 0 || name.isEmpty()) {
        *error = tr("metric pattern \"%1\": expected NAME=REGEX").arg(spec);
        return false;
    }
    if (!validName.match(name).hasMatch()) {
        *error = tr("metric pattern \"%1\": the name \"%2\" must start with a letter or '_' and "
                    "hold only "
                    "letters, digits, '_', '.', '/' and '-'")
                     .arg(spec, name);
        return false;
    }
    QRegularExpression re(spec.mid(eq + 1));
    if (!re.isValid()) {
        *error = tr("metric pattern \"%1\": invalid regular expression: %2 (at offset %3)")
                     .arg(spec, re.errorString())
                     .arg(re.patternErrorOffset());
        return false;
    }
    if (re.captureCount() != 1) {
        *error =
            tr("metric pattern \"%1\": the regular expression needs exactly one capture group for "
               "the value, it has %2")
                .arg(spec)
                .arg(re.captureCount());
        return false;
    }
    pattern->name = name;
    pattern->regex = re;
    return true;
}

} // namespace rankdeck
