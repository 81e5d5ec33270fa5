// SPDX-License-Identifier: GPL-3.0-or-later
//
// What a failed Python rank printed, as data: the traceback of an uncaught exception (the whole
// chain, `raise … from` and "During handling…"), faulthandler's dump at a fatal signal or hang,
// and torchelastic's error file. The launcher reads these from the rank's stderr and from the
// supervisor's events so that the failure report can show the user's own frame first, group
// ranks that died the same way, and tell a peer's echo from a cause.
// The formats are CPython's (Lib/traceback.py, Python/traceback.c; /work/shared/reference.md,
// "Users' own programs"). Every parser is bounded: frames, exceptions, threads, text lengths.
#pragma once

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace rankdeck {

struct PythonFrame
{
    QString file;
    int line = 0; // 0 when the dump did not know it ("???")
    QString function;
    QString source; // the code line the traceback printed, trimmed; `^^^`/`~~~` markers dropped

    bool operator==(const PythonFrame &other) const = default;
    // Every field cut to pythonlimits (below). See PythonFaultDump::bounded().
    PythonFrame bounded() const;
    QJsonObject toJson() const;
    static PythonFrame fromJson(const QJsonObject &json);
};

struct PythonException
{
    QString type;              // as printed: "ValueError", "torch.distributed.DistBackendError"
    QString message;           // may span lines (bounded); empty for a bare "KeyboardInterrupt"
    QList<PythonFrame> frames; // innermost first
    // How it follows the exception before it in the chain: "cause" (`raise … from`, "…was the
    // direct cause…"), "context" ("During handling…"), "" for the first.
    QString chainedBy;
    // Frames left out to stay bounded: the outermost ones (the innermost are where it failed).
    int framesOmitted = 0;

    bool operator==(const PythonException &other) const = default;
    PythonException bounded() const;
    QJsonObject toJson() const;
    static PythonException fromJson(const QJsonObject &json);
};

struct PythonThreadStack
{
    QString threadId; // "0x00007f…"; empty for a one-thread dump ("Stack (most recent call first)")
    bool current = false;      // the thread that got the signal
    QList<PythonFrame> frames; // innermost first
    // "<no Python frame>", "Garbage-collecting", "... (more frames)": what the dump said instead
    // of, or after, its frames.
    QString note;

    bool operator==(const PythonThreadStack &other) const = default;
    PythonThreadStack bounded() const;
    QJsonObject toJson() const;
    static PythonThreadStack fromJson(const QJsonObject &json);
};

struct PythonFaultDump
{
    QString fatalError; // "Segmentation fault"; empty for a dump on request (a hang)
    QList<PythonThreadStack> threads;

    bool isEmpty() const { return fatalError.isEmpty() && threads.isEmpty(); }
    // The thread that got the signal, else the first; nullptr without threads.
    const PythonThreadStack *currentThread() const;

    bool operator==(const PythonFaultDump &other) const = default;
    // Every field cut to pythonlimits. The parsers give only bounded values, and fromJson() is
    // bounded() of what it reads, so fromJson(toJson(x)) == x for whatever a parser gave: the
    // record keeps exactly what the scanner found. (Each bound used to be written twice, once
    // in the parser and once in fromJson(), and the two drifted: a 200-digit thread id did not
    // survive the run record; issue #25.)
    PythonFaultDump bounded() const;
    QJsonObject toJson() const;
    static PythonFaultDump fromJson(const QJsonObject &json);
};

// Bounds, shared by the parsers, the scanner and fromJson(): a rank's worst case (hostile text)
// stays within a few MB, a real traceback or dump never reaches them.
namespace pythonlimits {
inline constexpr int MaxFrames = 200;       // per exception: the innermost kept
inline constexpr int MaxChain = 8;          // exceptions per chain: the last kept
inline constexpr int MaxThreads = 100;      // faulthandler's own limit
inline constexpr int MaxThreadFrames = 100; // per thread, faulthandler's own limit ("...")
inline constexpr int MaxDumpFrames = 2000;  // in all threads of one dump
inline constexpr int MaxLine = 4096;        // characters of one input line looked at
inline constexpr int MaxMessage = 8192;     // characters of one exception message
inline constexpr int MaxMessageLines = 40;
inline constexpr int MaxFile = 1000;    // characters of a frame's file name
inline constexpr int MaxFunction = 200; // characters of a frame's function name
inline constexpr int MaxSource = 300;   // characters of one source line
inline constexpr int MaxType = 300;     // characters of an exception's type name
inline constexpr int MaxChainedBy = 16; // "cause", "context"
// A thread id as faulthandler prints it is "0x" and 16 hex digits; a longer one is kept cut.
inline constexpr int MaxThreadId = 64;
inline constexpr int MaxNoteLine = 100; // one "<no Python frame>"-like line of a thread
inline constexpr int MaxNote = 400;     // all of a thread's note lines
} // namespace pythonlimits

// The chain of the last complete traceback in `text`, in printed order (the last exception is
// the one that ended the program); empty when there is none. Lines may carry torch's
// "[rank0]: " or torchrun's "[default0]:" prefix. A traceback cut off before its "Type: message"
// line does not count; a cut-off later link leaves the complete links before it.
QList<PythonException> parsePythonTraceback(const QString &text);

// The last faulthandler dump in `text` (a crash's "Fatal Python error: …" or an all-threads
// dump on request); empty when there is none.
PythonFaultDump parseFaultHandlerDump(const QString &text);

// torchelastic's $TORCHELASTIC_ERROR_FILE: {"message": {"message": "Type: msg", "extraInfo":
// {"py_callstack": "<traceback>", "timestamp": "<unix s>"}}} or the plain {"message": "…",
// "timestamp": N}. The chain from py_callstack; without frames, one exception from "Type: msg".
// *timeUs: the timestamp in µs since the epoch, 0 when the file has none. Garbage gives {}.
QList<PythonException> parseElasticErrorFile(const QByteArray &json, qint64 *timeUs = nullptr);

// The user's own code: not site-packages/dist-packages, not the standard library
// (/lib/python3.N/), not `<frozen …>`/`<string>`, not rankdeck's own helper module or the
// startup hook (sitecustomize.py) it writes into a run's python/ folder.
bool isUserFile(const QString &file);
// Index of the innermost frame (frames innermost first) in a user file; -1 if none.
int innermostUserFrame(const QList<PythonFrame> &frames);

// As Python prints it: "Traceback (most recent call last):", outermost frame first, the chain
// separators, "Type: message" last. markUserFrame: the innermost user frame of the exception
// that ended the program gets "→ " in place of the two spaces before "File".
QString formatPythonTraceback(const QList<PythonException> &chain, bool markUserFrame = false);
// As faulthandler prints it (threads in the dump's order).
QString formatFaultDump(const PythonFaultDump &dump, bool markUserFrame = false);

QJsonArray pythonChainToJson(const QList<PythonException> &chain);
QList<PythonException> pythonChainFromJson(const QJsonArray &json);

} // namespace rankdeck
