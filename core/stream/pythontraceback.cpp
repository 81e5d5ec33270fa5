// SPDX-License-Identifier: GPL-3.0-or-later
#include "stream/pythontraceback.h"

#include "stream/pythontracebackreader.h"

#include <QJsonDocument>
#include <QJsonValue>
#include <QRegularExpression>
#include <QStringTokenizer>

namespace rankdeck {

namespace {

using namespace pythonlimits;

QString str(const QJsonObject &o, QLatin1String key)
{
    return o.value(key).toString().left(MaxMessage); // the longest bound; bounded() cuts the rest
}

QJsonArray framesToJson(const QList<PythonFrame> &frames)
{
    QJsonArray a;
    for (const PythonFrame &f : frames)
        a.append(f.toJson());
    return a;
}

QList<PythonFrame> framesFromJson(const QJsonValue &v, int max = MaxFrames)
{
    QList<PythonFrame> out;
    for (const QJsonArray items = v.toArray(); const auto &f : items) {
        if (out.size() >= max)
            break;
        if (f.isObject())
            out.append(PythonFrame::fromJson(f.toObject()));
    }
    return out;
}

// "ValueError: bad batch" → type and message; a text that does not start with a type name is
// all message.
PythonException exceptionFromSummary(const QString &text)
{
    static const QRegularExpression re(QStringLiteral(R"(^([A-Za-z_<][\w.<>]*)(?::\s?(.*))?$)"),
                                       QRegularExpression::DotMatchesEverythingOption);
    PythonException e;
    const QString t = text.trimmed().left(MaxMessage);
    const QRegularExpressionMatch m = re.match(t);
    if (m.hasMatch()) {
        e.type = m.captured(1);
        e.message = m.captured(2);
    } else {
        e.message = t;
    }
    return e.bounded();
}

QString frameText(const PythonFrame &f, bool marked, bool dumpStyle)
{
    QString s = marked ? QStringLiteral("→ ") : QStringLiteral("  ");
    const QString line = f.line > 0 ? QString::number(f.line) : QStringLiteral("???");
    if (dumpStyle)
        s += QStringLiteral("File \"%1\", line %2 in %3").arg(f.file, line, f.function);
    else if (f.function.isEmpty())
        s += QStringLiteral("File \"%1\", line %2").arg(f.file, line);
    else
        s += QStringLiteral("File \"%1\", line %2, in %3").arg(f.file, line, f.function);
    s += QLatin1Char('\n');
    if (!dumpStyle && !f.source.isEmpty())
        s += QStringLiteral("    ") + f.source + QLatin1Char('\n');
    return s;
}

} // namespace

PythonFrame PythonFrame::bounded() const
{
    PythonFrame f = *this;
    f.file.truncate(MaxFile);
    f.function.truncate(MaxFunction);
    f.source.truncate(MaxSource);
    return f;
}

QJsonObject PythonFrame::toJson() const
{
    QJsonObject o;
    o[QStringLiteral("file")] = file;
    o[QStringLiteral("line")] = line;
    o[QStringLiteral("function")] = function;
    if (!source.isEmpty())
        o[QStringLiteral("source")] = source;
    return o;
}

PythonFrame PythonFrame::fromJson(const QJsonObject &json)
{
    PythonFrame f;
    f.file = str(json, QLatin1String("file"));
    f.line = json.value(QLatin1String("line")).toInt(0);
    f.function = str(json, QLatin1String("function"));
    f.source = str(json, QLatin1String("source"));
    return f.bounded();
}

PythonException PythonException::bounded() const
{
    PythonException e = *this;
    e.type.truncate(MaxType);
    e.message.truncate(MaxMessage);
    // The innermost frames are where it failed: drop outer ones, and count them.
    if (e.frames.size() > MaxFrames) {
        e.framesOmitted += int(e.frames.size() - MaxFrames);
        e.frames.resize(MaxFrames);
    }
    for (PythonFrame &f : e.frames)
        f = f.bounded();
    e.chainedBy.truncate(MaxChainedBy);
    e.framesOmitted = qMax(0, e.framesOmitted);
    return e;
}

QJsonObject PythonException::toJson() const
{
    QJsonObject o;
    o[QStringLiteral("type")] = type;
    o[QStringLiteral("message")] = message;
    o[QStringLiteral("frames")] = framesToJson(frames);
    if (!chainedBy.isEmpty())
        o[QStringLiteral("chained_by")] = chainedBy;
    if (framesOmitted > 0)
        o[QStringLiteral("frames_omitted")] = framesOmitted;
    return o;
}

PythonException PythonException::fromJson(const QJsonObject &json)
{
    PythonException e;
    e.type = str(json, QLatin1String("type"));
    e.message = str(json, QLatin1String("message"));
    e.frames = framesFromJson(json.value(QLatin1String("frames")));
    e.chainedBy = str(json, QLatin1String("chained_by"));
    e.framesOmitted = json.value(QLatin1String("frames_omitted")).toInt(0);
    return e.bounded();
}

PythonThreadStack PythonThreadStack::bounded() const
{
    PythonThreadStack t = *this;
    t.threadId.truncate(MaxThreadId);
    if (t.frames.size() > MaxThreadFrames)
        t.frames.resize(MaxThreadFrames);
    for (PythonFrame &f : t.frames)
        f = f.bounded();
    t.note.truncate(MaxNote);
    return t;
}

QJsonObject PythonThreadStack::toJson() const
{
    QJsonObject o;
    o[QStringLiteral("id")] = threadId;
    o[QStringLiteral("current")] = current;
    o[QStringLiteral("frames")] = framesToJson(frames);
    if (!note.isEmpty())
        o[QStringLiteral("note")] = note;
    return o;
}

PythonThreadStack PythonThreadStack::fromJson(const QJsonObject &json)
{
    PythonThreadStack t;
    t.threadId = str(json, QLatin1String("id"));
    t.current = json.value(QLatin1String("current")).toBool(false);
    t.frames = framesFromJson(json.value(QLatin1String("frames")), MaxThreadFrames);
    t.note = str(json, QLatin1String("note"));
    return t.bounded();
}

const PythonThreadStack *PythonFaultDump::currentThread() const
{
    for (const PythonThreadStack &t : threads)
        if (t.current)
            return &t;
    return threads.isEmpty() ? nullptr : &threads.first();
}

PythonFaultDump PythonFaultDump::bounded() const
{
    PythonFaultDump d;
    d.fatalError = fatalError.left(MaxMessage);
    qsizetype frames = 0;
    for (const PythonThreadStack &t : threads) {
        if (d.threads.size() >= MaxThreads)
            break;
        PythonThreadStack b = t.bounded();
        if (frames + b.frames.size() > MaxDumpFrames)
            b.frames.resize(qMax<qsizetype>(0, MaxDumpFrames - frames));
        frames += b.frames.size();
        d.threads.append(b);
    }
    return d;
}

QJsonObject PythonFaultDump::toJson() const
{
    QJsonObject o;
    o[QStringLiteral("fatal_error")] = fatalError;
    QJsonArray a;
    for (const PythonThreadStack &t : threads)
        a.append(t.toJson());
    o[QStringLiteral("threads")] = a;
    return o;
}

PythonFaultDump PythonFaultDump::fromJson(const QJsonObject &json)
{
    PythonFaultDump d;
    d.fatalError = str(json, QLatin1String("fatal_error"));
    for (const QJsonArray items = json.value(QLatin1String("threads")).toArray();
         const auto &v : items) {
        if (d.threads.size() >= MaxThreads)
            break;
        if (v.isObject())
            d.threads.append(PythonThreadStack::fromJson(v.toObject()));
    }
    return d.bounded();
}

QJsonArray pythonChainToJson(const QList<PythonException> &chain)
{
    QJsonArray a;
    for (const PythonException &e : chain)
        a.append(e.toJson());
    return a;
}

QList<PythonException> pythonChainFromJson(const QJsonArray &json)
{
    QList<PythonException> out;
    // The last ones ended the program: keep those when a record holds too many.
    for (qsizetype i = qMax<qsizetype>(0, json.size() - MaxChain); i < json.size(); ++i)
        if (json.at(i).isObject())
            out.append(PythonException::fromJson(json.at(i).toObject()));
    return out;
}

QList<PythonException> parsePythonTraceback(const QString &text)
{
    PythonTracebackReader reader;
    for (const QStringView line : QStringTokenizer{text, u'\n'})
        reader.addLine(line);
    return reader.lastException();
}

PythonFaultDump parseFaultHandlerDump(const QString &text)
{
    PythonTracebackReader reader;
    for (const QStringView line : QStringTokenizer{text, u'\n'})
        reader.addLine(line);
    return reader.lastFaultDump();
}

QList<PythonException> parseElasticErrorFile(const QByteArray &json, qint64 *timeUs)
{
    if (timeUs)
        *timeUs = 0;
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
    if (!doc.isObject())
        return {};
    const QJsonObject root = doc.object();
    const QJsonValue message = root.value(QLatin1String("message"));
    QString summary, callstack;
    QJsonValue timestamp;
    if (message.isObject()) {
        const QJsonObject m = message.toObject();
        summary = m.value(QLatin1String("message")).toString();
        const QJsonObject extra = m.value(QLatin1String("extraInfo")).toObject();
        callstack = extra.value(QLatin1String("py_callstack")).toString();
        timestamp = extra.value(QLatin1String("timestamp"));
    } else if (message.isString()) {
        summary = message.toString();
        timestamp = root.value(QLatin1String("timestamp"));
    } else {
        return {};
    }
    if (timeUs) {
        // torchelastic writes whole seconds as a string; the plain form has a number.
        const double seconds =
            timestamp.isString() ? timestamp.toString().toDouble() : timestamp.toDouble(0);
        if (seconds > 0 && seconds < 1e11)
            *timeUs = qint64(seconds * 1e6);
    }
    QList<PythonException> chain = parsePythonTraceback(callstack);
    if (chain.isEmpty() && summary.contains(QLatin1String("Traceback (most recent call last):")))
        chain = parsePythonTraceback(summary);
    if (chain.isEmpty() && !summary.trimmed().isEmpty())
        chain.append(exceptionFromSummary(summary));
    return chain;
}

bool isUserFile(const QString &file)
{
    if (file.isEmpty() || file.startsWith(QLatin1Char('<')))
        return false;
    // RankDeck's own: its helper module, and the startup hook the supervisor writes beside it
    // into a run's python/ folder, under rankdeck/ or a runs/<run id>/ folder (a Slurm profile's
    // shared directory): its flight-recorder and dump threads are never the user's code.
    static const QRegularExpression library(QStringLiteral(
        R"([/\\](?:site|dist)-packages[/\\]|[/\\]lib(?:64)?[/\\]python\d+(?:\.\d+)?t?[/\\]|(?:^|[/\\])rankdeck[/\\][^/\\]+\.py$|(?:[/\\]rankdeck[/\\]|[/\\]runs[/\\]\d{8}-\d{6}-[^/\\]+[/\\])(?:.*[/\\])?python[/\\]sitecustomize\.py$)"));
    return !library.match(file).hasMatch();
}

int innermostUserFrame(const QList<PythonFrame> &frames)
{
    for (qsizetype i = 0; i < frames.size(); ++i)
        if (isUserFile(frames[i].file))
            return int(i);
    return -1;
}

QString formatPythonTraceback(const QList<PythonException> &chain, bool markUserFrame)
{
    QString out;
    for (qsizetype i = 0; i < chain.size(); ++i) {
        const PythonException &e = chain[i];
        if (i > 0)
            out += e.chainedBy == QLatin1String("cause")
                       ? QStringLiteral("\nThe above exception was the direct cause of the "
                                        "following exception:\n\n")
                       : QStringLiteral("\nDuring handling of the above exception, another "
                                        "exception occurred:\n\n");
        if (!e.frames.isEmpty() || e.framesOmitted > 0) {
            out += QStringLiteral("Traceback (most recent call last):\n");
            if (e.framesOmitted > 0)
                out += QStringLiteral("  [%1 outer frames not kept]\n").arg(e.framesOmitted);
            const int mark =
                markUserFrame && i == chain.size() - 1 ? innermostUserFrame(e.frames) : -1;
            for (qsizetype j = e.frames.size() - 1; j >= 0; --j)
                out += frameText(e.frames[j], j == mark, false);
        }
        if (e.type.isEmpty())
            out += e.message;
        else if (e.message.isEmpty())
            out += e.type;
        else
            out += e.type + QStringLiteral(": ") + e.message;
        out += QLatin1Char('\n');
    }
    return out;
}

QString formatFaultDump(const PythonFaultDump &dump, bool markUserFrame)
{
    QString out;
    if (!dump.fatalError.isEmpty())
        out += QStringLiteral("Fatal Python error: %1\n\n").arg(dump.fatalError);
    const PythonThreadStack *current = dump.currentThread();
    for (qsizetype i = 0; i < dump.threads.size(); ++i) {
        const PythonThreadStack &t = dump.threads[i];
        if (i > 0)
            out += QLatin1Char('\n');
        if (t.threadId.isEmpty())
            out += QStringLiteral("Stack (most recent call first):\n");
        else
            out += QStringLiteral("%1 %2 (most recent call first):\n")
                       .arg(t.current ? QStringLiteral("Current thread") : QStringLiteral("Thread"),
                            t.threadId);
        const int mark = markUserFrame && &t == current ? innermostUserFrame(t.frames) : -1;
        for (qsizetype j = 0; j < t.frames.size(); ++j)
            out += frameText(t.frames[j], j == mark, true);
        for (const QString &note : t.note.split(QLatin1Char('\n'), Qt::SkipEmptyParts))
            out += QStringLiteral("  ") + note + QLatin1Char('\n');
    }
    return out;
}

} // namespace rankdeck
