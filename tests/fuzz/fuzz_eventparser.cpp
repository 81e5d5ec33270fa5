// SPDX-License-Identifier: GPL-3.0-or-later
//
// EventParser, WorkerEvent::fromJson and RankStream on what a rank prints. The CRC keeps random
// bytes from ever being an event, so half the inputs are sealed here with a correct checksum:
// the JSON decoding behind the CRC is fuzzed too, as a forged but well-framed event reaches it.
// Promises checked: text is the whole line, or what precedes an accepted event; an accepted
// event names the expected rank; RankStream's lines are bounded and their bytes add up.
// Input: [mode][rank] then, sealed: prefix \0 json; plain: the line(s).
#include "fuzzinput.h"

#include "stream/eventparser.h"
#include "stream/rankstream.h"
#include "wire/wireprotocol.h"

#include <cstdio>

using namespace rankdeck;

namespace {

QByteArray sealed(QByteArrayView prefix, QByteArrayView json)
{
    char crc[9];
    std::snprintf(crc, sizeof crc, "%08x",
                  unsigned(wire::crc32(std::string_view(json.data(), size_t(json.size())))));
    QByteArray line = prefix.toByteArray();
    line += QByteArrayView(wire::kMarker.data(), qsizetype(wire::kMarker.size()));
    line += QByteArrayView(crc, 8);
    line += ' ';
    line += json;
    return line;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    fuzz::FuzzInput in(data, size);
    const std::uint8_t mode = in.byte();
    const int rank = int(in.byte() % 5) - 1; // -1: any rank
    QByteArray input;
    QByteArrayView json;
    if (mode & 1) {
        const QByteArrayView prefix = in.until('\0');
        json = in.rest();
        input = sealed(prefix, json);
    } else {
        input = in.rest().toByteArray();
        json = input;
    }

    for (const QByteArray &line : input.split('\n')) {
        const ParsedLine parsed = EventParser::parse(line, rank);
        if (parsed.event) {
            FUZZ_CHECK(line.startsWith(parsed.text));
            FUZZ_CHECK(parsed.hasText == !parsed.text.isEmpty());
            FUZZ_CHECK(rank < 0 || parsed.event->rank() == rank);
        } else {
            FUZZ_CHECK(parsed.text == line);
            FUZZ_CHECK(parsed.hasText);
        }
    }
    (void)WorkerEvent::fromJson(json);

    // The same bytes as a rank's stdout, in chunks of the mode's size, then its end.
    RankStream::Options options;
    options.maxPieceBytes = 64;
    options.maxDisplayBytes = 48;
    RankStream stream(rank < 0 ? 0 : rank, options);
    RankStream::Output out;
    const qsizetype chunk = 1 + (mode >> 1);
    for (qsizetype at = 0; at < input.size(); at += chunk)
        stream.feed(StreamKind::Stdout,
                    QByteArrayView(input).sliced(at, qMin(chunk, input.size() - at)), out, 1);
    stream.finish(out, 1);
    qint64 rawBytes = 0;
    for (const LogLine &line : out.lines) {
        FUZZ_CHECK(line.raw.size() <= options.maxPieceBytes || !line.partial);
        FUZZ_CHECK(line.text.size() <= options.maxDisplayBytes + 80);
        FUZZ_CHECK(line.byteLength >= line.raw.size());
        rawBytes += line.raw.size();
    }
    // Events and newlines are the only bytes not in a line's raw bytes.
    FUZZ_CHECK(rawBytes <= input.size());
    if (!input.contains(wire::kRecordSeparator))
        FUZZ_CHECK(rawBytes + input.count('\n') == input.size());
    return 0;
}
