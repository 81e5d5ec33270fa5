// SPDX-License-Identifier: GPL-3.0-or-later
//
// LogMetricExtractor (the default patterns, and user patterns from parseMetricPattern) on the
// plain lines of a user's program. Promises checked: a pattern spec is accepted with one capture
// group or refused with a message; every point has a name and a value.
// Input: [flags] then pattern specs, one a line, up to a \0, then the program's lines. Flag 8:
// the rest is a program's output instead, fed through a RankStream in chunks (the first byte of
// each chunk sets the next one's size, flag 16 puts odd chunks on stderr), so that progress
// bars' redraws, live rows and tqdm.write's clears reach the extractor as in a run; what comes
// out of a derived x (a bar, a dict line) never goes back.
#include "fuzzinput.h"

#include "config/metricpattern.h"
#include "stream/logmetricextractor.h"
#include "stream/rankstream.h"

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
    if (flags & 8) {
        RankStream stream(0);
        const QByteArray rest = in.rest().toByteArray();
        QHash<QString, qint64> last;
        auto check = [&](const RankStream::Output &out) {
            for (const LogMetricExtractor::Point &point : extractor.extract(0, out)) {
                FUZZ_CHECK(!point.name.isEmpty());
                FUZZ_CHECK(point.timeUs > 0);
                // A series' x never goes back but where a line printed it (a restart).
                if (point.basis == XBasis::Report) {
                    FUZZ_CHECK(point.step == last.value(point.name, -1) + 1);
                    last[point.name] = point.step;
                }
            }
        };
        qsizetype piece = 16;
        qint64 t = 1;
        int n = 0;
        for (qsizetype off = 0; off < rest.size(); off += piece) {
            piece = qMin<qsizetype>(piece, rest.size() - off);
            const QByteArrayView chunk = QByteArrayView(rest).sliced(off, piece);
            const StreamKind kind =
                (flags & 16) && (n++ % 2) ? StreamKind::Stderr : StreamKind::Stdout;
            check(stream.feed(kind, chunk, t++));
            piece = 1 + std::uint8_t(chunk.front()) % 97;
        }
        check(stream.finish(t));
        return 0;
    }
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
