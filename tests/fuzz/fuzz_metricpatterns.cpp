// SPDX-License-Identifier: GPL-3.0-or-later
//
// LogMetricExtractor (the default patterns, and user patterns from parseMetricPattern) on the
// plain lines of a user's program. Promises checked: a pattern spec is accepted with one capture
// group or refused with a message; every point has a name and a value.
// Input: [flags] then pattern specs, one a line, up to a \0, then the program's lines.
#include "fuzzinput.h"

#include "config/metricpattern.h"
#include "stream/logmetricextractor.h"

using namespace rankdeck;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    fuzz::FuzzInput in(data, size);
    const std::uint8_t flags = in.byte();
    // A user's own regex may be slow on purpose ((a+)+b) and that is theirs to choose: specs
    // are kept short, the program's lines are the outside bytes under test.
    QList<MetricPattern> patterns;
    for (const QByteArray &spec : in.until('\0').toByteArray().split('\n')) {
        if (spec.size() > 48 || patterns.size() >= 4)
            continue;
        MetricPattern pattern;
        QString error;
        if (parseMetricPattern(QString::fromUtf8(spec), &pattern, &error)) {
            FUZZ_CHECK(!pattern.name.isEmpty());
            FUZZ_CHECK(pattern.regex.isValid() && pattern.regex.captureCount() == 1);
            patterns.append(pattern);
        } else {
            FUZZ_CHECK(!error.isEmpty());
        }
    }

    LogMetricExtractor extractor;
    extractor.setDefaultPatternsEnabled(!(flags & 1));
    extractor.setUserPatterns(patterns);
    if (flags & 2)
        extractor.reportedInEvents(0, QStringLiteral("loss"));
    int line = 0;
    for (const QByteArray &bytes : in.rest().toByteArray().split('\n')) {
        const int rank = (flags & 4) ? line % 3 : 0;
        ++line;
        for (const LogMetricExtractor::Point &point :
             extractor.extract(rank, QString::fromUtf8(bytes))) {
            FUZZ_CHECK(!point.name.isEmpty());
            FUZZ_CHECK(point.name.size() <= bytes.size() + 64);
        }
    }
    return 0;
}
