// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Python failure parsers on a rank's stderr: parsePythonTraceback, parseFaultHandlerDump,
// PythonFailureScanner (line by line, two ranks interleaved), and parseElasticErrorFile on
// torchelastic's error file. Promises checked: the pythonlimits bounds hold whatever comes in;
// the scanner fed line by line finds what the one-shot parsers find in the whole text; what is
// found survives the JSON of the run record unchanged, as objects and as the text the record
// writes, and can be printed again.
// Input: [split byte] then the text; the split byte's bits say where rank 1's lines go.
#include "fuzzinput.h"

#include "stream/pythonfailurescanner.h"
#include "stream/pythontraceback.h"

#include <QJsonArray>
#include <QJsonDocument>

using namespace rankdeck;

namespace {

// What a parser gives is within every bound: bounded() changes nothing.
void checkBounds(const QList<PythonException> &chain)
{
    FUZZ_CHECK(chain.size() <= pythonlimits::MaxChain);
    for (const PythonException &e : chain)
        FUZZ_CHECK(e.bounded() == e);
}

void checkBounds(const PythonFaultDump &dump)
{
    FUZZ_CHECK(dump.bounded() == dump);
}

// The run record's way: compact JSON text, read back.
QJsonValue throughText(const QJsonValue &v)
{
    const QJsonDocument doc =
        v.isArray() ? QJsonDocument(v.toArray()) : QJsonDocument(v.toObject());
    const QJsonDocument back = QJsonDocument::fromJson(doc.toJson(QJsonDocument::Compact));
    return back.isArray() ? QJsonValue(back.array()) : QJsonValue(back.object());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    fuzz::FuzzInput in(data, size);
    const std::uint8_t split = in.byte();
    const QByteArrayView bytes = in.rest();
    const QString text = QString::fromUtf8(bytes);

    const QList<PythonException> chain = parsePythonTraceback(text);
    checkBounds(chain);
    FUZZ_CHECK(pythonChainFromJson(pythonChainToJson(chain)) == chain);
    FUZZ_CHECK(pythonChainFromJson(throughText(pythonChainToJson(chain)).toArray()) == chain);
    (void)formatPythonTraceback(chain, true);

    const PythonFaultDump dump = parseFaultHandlerDump(text);
    checkBounds(dump);
    FUZZ_CHECK(PythonFaultDump::fromJson(dump.toJson()) == dump);
    FUZZ_CHECK(PythonFaultDump::fromJson(throughText(dump.toJson()).toObject()) == dump);
    (void)formatFaultDump(dump, true);
    (void)dump.currentThread();

    // Rank 0 gets every line, rank 1 the lines the split byte picks, interleaved.
    PythonFailureScanner scanner;
    const QStringList lines = text.split(QLatin1Char('\n'));
    for (qsizetype i = 0; i < lines.size(); ++i) {
        scanner.addLine(0, lines[i]);
        if (split & (1u << (i % 8)))
            scanner.addLine(1, lines[i]);
    }
    FUZZ_CHECK(scanner.lastException(0) == chain);
    FUZZ_CHECK(scanner.lastFaultDump(0) == dump);
    checkBounds(scanner.lastException(1));
    checkBounds(scanner.lastFaultDump(1));
    FUZZ_CHECK(PythonFaultDump::fromJson(scanner.lastFaultDump(1).toJson()) ==
               scanner.lastFaultDump(1));

    qint64 timeUs = 0;
    const QList<PythonException> elastic = parseElasticErrorFile(bytes.toByteArray(), &timeUs);
    checkBounds(elastic);
    return 0;
}
