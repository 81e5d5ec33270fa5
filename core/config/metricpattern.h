// SPDX-License-Identifier: GPL-3.0-or-later
//
// A user's metric pattern, `NAME=REGEX` with one capture group for the value: what
// `launch --metric`, `profiles add --metric`, a profile's `metrics = [...]`, the launch form and
// the profile editor accept, checked by one rule wherever it is given. LogMetricExtractor
// (core/stream) applies the patterns to a program's lines.
#pragma once

#include <QRegularExpression>
#include <QString>

namespace rankdeck {

struct MetricPattern
{
    QString name;
    QRegularExpression regex;
};

// "NAME=REGEX" → pattern; false and *error naming the pattern when the name is empty or odd,
// the regex does not compile, or it has no or several capture groups.
bool parseMetricPattern(const QString &spec, MetricPattern *pattern, QString *error);

} // namespace rankdeck
