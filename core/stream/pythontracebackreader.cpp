// SPDX-License-Identifier: GPL-3.0-or-later
#include "stream/pythontracebackreader.h"

#include <QRegularExpression>

#include <algorithm>

namespace rankdeck {

namespace {

using namespace pythonlimits;

constexpr QLatin1String
    kCauseSentence("The above exception was the direct cause of the following exception:");
constexpr QLatin1String
    kContextSentence("During handling of the above exception, another exception occurred:");

// torch's excepthook prints "[rank0]: " before every line of an uncaught exception; torchrun's
// --tee prints "[default0]:" (role and local rank, no space).
const QRegularExpression &rankPrefix()
{
    static const QRegularExpression re(QStringLiteral(R"(^\[[A-Za-z_]*\d+\]: ?)"));
    return re;
}

const QRegularExpression &tracebackHeader()
{
    static const QRegularExpression re(
        QStringLiteral(R"(^Traceback \(most recent call last\):\s*$)"));
    return re;
}

const QRegularExpression &groupHeader()
{
    static const QRegularExpression re(
        QStringLiteral(R"(^( *)\+ Exception Group Traceback \(most recent call last\):\s*$)"));
    return re;
}

// `  File "x.py", line 42, in fn`; a SyntaxError's location has no ", in fn".
const QRegularExpression &frameRegex()
{
    static const QRegularExpression re(
        QStringLiteral(R"re(^\s+File "(.*)", line (\d+)(?:, in (.*?))?\s*$)re"));
    return re;
}

// "ValueError: msg", "torch.distributed.DistBackendError: msg", "KeyboardInterrupt".
const QRegularExpression &exceptionLine()
{
    static const QRegularExpression re(QStringLiteral(R"(^([A-Za-z_<][\w.<>]*)(?::\s?(.*))?$)"));
    return re;
}

const QRegularExpression &markerLine()
{
    static const QRegularExpression re(QStringLiteral(R"(^\s*[~^]+\s*$)"));
    return re;
}

const QRegularExpression &fatalHeader()
{
    static const QRegularExpression re(QStringLiteral(R"(^Fatal Python error: (.*?)\s*$)"));
    return re;
}

// Python 3.14 may name the thread: "Current thread 0x… [name] (most recent call first):".
const QRegularExpression &threadHeader()
{
    static const QRegularExpression re(QStringLiteral(
        R"(^(Current thread|Thread) (0x[0-9a-fA-F]+)(?: \[[^\]]*\])? \(most recent call first\):\s*$)"));
    return re;
}

const QRegularExpression &stackHeader()
{
    static const QRegularExpression re(QStringLiteral(R"(^Stack \(most recent call first\):\s*$)"));
    return re;
}

// faulthandler's frame: no comma before "in"; "???" for an unknown line.
const QRegularExpression &dumpFrame()
{
    static const QRegularExpression re(
        QStringLiteral(R"re(^\s+File "(.*)", line (\S+) in (.*?)\s*$)re"));
    return re;
}

// A log line of some other source: glog/c10 ("[W1201 11:46:27…", "I1201 11:46:27…"), a
// timestamp, Python logging's default format, or a RankDeck wire event.
const QRegularExpression &otherSource()
{
    static const QRegularExpression re(QStringLiteral(
        R"(^(?:\[?[IWEF]\d{4} \d\d:\d\d:\d\d|\d{4}-\d\d-\d\d[ T]\d\d:\d\d|(?:INFO|WARNING|ERROR|DEBUG|CRITICAL):)|\x{1e})"));
    return re;
}

bool isSyntaxErrorType(const QString &type)
{
    return type.endsWith(QLatin1String("SyntaxError")) ||
           type.endsWith(QLatin1String("IndentationError")) ||
           type.endsWith(QLatin1String("TabError")) ||
           type.endsWith(QLatin1String("_IncompleteInputError"));
}

bool startsWithSpace(const QString &line)
{
    return !line.isEmpty() && line.at(0).isSpace();
}

QString cleanLine(QStringView raw, bool *prefixed)
{
    QStringView v = raw.left(MaxLine);
    while (!v.isEmpty() && (v.back() == u'\r' || v.back() == u'\n'))
        v.chop(1);
    // torch writes a NUL byte before the "[rank1]: Traceback …" of a rank whose DataLoader
    // worker died (issue 27: the traceback that said "is killed by signal: Segmentation fault"
    // was not recognised); no traceback or dump line starts with one. The launcher's lines show
    // it as "␀" (U+2400, LineSplitter::displayText()), raw text as itself.
    while (!v.isEmpty() && (v.front() == u'\0' || v.front() == QChar(0x2400)))
        v = v.mid(1);
    QString line = v.toString();
    // Python 3.13 colours its tracebacks under FORCE_COLOR/PYTHON_COLORS even into a pipe.
    if (line.contains(QChar(0x1b))) {
        static const QRegularExpression ansi(QStringLiteral(R"(\x{1b}\[[0-9;]*[A-Za-z])"));
        line.remove(ansi);
    }
    // A row someone left unfinished (a progress bar, redrawn without a newline) and the header
    // Python then wrote share one line: "… 4/16 [00:00<00:00][rank0]: Traceback (most recent
    // call last):" (issue 27: Transformers' tqdm bar on rank 0 hid that rank's KeyError). The
    // header is what counts; a line that only ends with these words is left to the next lines.
    if (QStringView(line).trimmed().endsWith(QLatin1String("(most recent call last):"))) {
        static const QRegularExpression trailing(QStringLiteral(
            R"(((?:\[[A-Za-z_]*\d+\]: ?)?Traceback \(most recent call last\):\s*)$)"));
        const QRegularExpressionMatch t = trailing.match(line);
        // Not an ExceptionGroup's own header, nor its sub-tracebacks' "  | " indents.
        const QStringView before = QStringView(line).left(t.hasMatch() ? t.capturedStart(1) : 0);
        const bool indentOnly = std::all_of(before.begin(), before.end(), [](QChar c) {
            return c == u' ' || c == u'|' || c == u'+';
        });
        if (!indentOnly && !before.endsWith(QLatin1String("Exception Group ")))
            line = t.captured(1);
    }
    const QRegularExpressionMatch m = rankPrefix().match(line);
    *prefixed = m.hasMatch();
    if (m.hasMatch())
        line.remove(0, m.capturedLength());
    return line;
}

void addNote(PythonThreadStack &t, const QString &note)
{
    if (t.note.size() + 1 + note.size() > MaxNote)
        return;
    if (!t.note.isEmpty())
        t.note += QLatin1Char('\n');
    t.note += note;
}

} // namespace

void PythonTracebackReader::addLine(QStringView raw)
{
    bool prefixed = false;
    const QString line = cleanLine(raw, &prefixed);
    if (tracebackHeader().match(line).hasMatch())
        m_chainPrefixed = prefixed;
    switch (m_state) {
    case State::Idle:
        startsSomething(line);
        return;
    case State::Frames:
        frameLine(line);
        return;
    case State::Message:
        if (line.trimmed().isEmpty()) {
            m_state = State::AfterBlank;
            return;
        }
        // torch prefixes every line of a rank's traceback ("[rank1]: "); an unprefixed line
        // after such a message is someone else's (libstdc++'s "terminate called …" at exit).
        if (m_messageLines < MaxMessageLines && (prefixed || !m_chainPrefixed) &&
            !otherSource().match(line).hasMatch() && !tracebackHeader().match(line).hasMatch() &&
            !groupHeader().match(line).hasMatch() && !fatalHeader().match(line).hasMatch() &&
            !threadHeader().match(line).hasMatch() && !stackHeader().match(line).hasMatch()) {
            appendMessage(line);
            return;
        }
        abandonChain();
        startsSomething(line);
        return;
    case State::AfterBlank:
        if (line == kCauseSentence || line == kContextSentence) {
            m_pendingChainedBy =
                line == kCauseSentence ? QStringLiteral("cause") : QStringLiteral("context");
            m_state = State::Separator;
            return;
        }
        abandonChain();
        startsSomething(line);
        return;
    case State::Separator:
        if (line.trimmed().isEmpty()) {
            m_state = State::Traceback;
            return;
        }
        abandonChain();
        startsSomething(line);
        return;
    case State::Traceback: {
        if (tracebackHeader().match(line).hasMatch()) {
            m_frames.clear();
            m_framesOmitted = 0;
            m_state = State::Frames;
            return;
        }
        if (const QRegularExpressionMatch g = groupHeader().match(line); g.hasMatch()) {
            m_frames.clear();
            m_framesOmitted = 0;
            m_groupColumn = int(g.capturedLength(1));
            m_state = State::Frames;
            return;
        }
        // An exception that was never raised has no traceback: just its "Type: message".
        if (const QRegularExpressionMatch e = exceptionLine().match(line); e.hasMatch()) {
            m_frames.clear();
            m_framesOmitted = 0;
            finishException(e.captured(1), e.captured(2));
            return;
        }
        abandonChain();
        startsSomething(line);
        return;
    }
    case State::GroupTail: {
        bool bar = false;
        const QString content = unwrapGroup(line, &bar);
        if (bar) {
            if (m_messageLines < MaxMessageLines)
                appendMessage(content);
            return;
        }
        if (line.size() > m_groupColumn && line.at(m_groupColumn) == u'+') {
            m_messageLines = MaxMessageLines; // the sub-exceptions start
            return;
        }
        static const QRegularExpression nested(QStringLiteral(R"(^\s*[+|])"));
        if (nested.match(line).hasMatch())
            return;
        m_groupColumn = -1;
        if (line.trimmed().isEmpty()) {
            m_state = State::AfterBlank;
            return;
        }
        abandonChain();
        startsSomething(line);
        return;
    }
    case State::Dump:
        dumpLine(line);
        return;
    case State::DumpCStack:
        if (line.isEmpty() || startsWithSpace(line))
            return;
        m_state = State::Dump;
        dumpLine(line);
        return;
    }
}

bool PythonTracebackReader::startsSomething(const QString &line)
{
    if (line.isEmpty())
        return false;
    if (tracebackHeader().match(line).hasMatch()) {
        abandonChain();
        m_state = State::Frames;
        return true;
    }
    if (const QRegularExpressionMatch g = groupHeader().match(line); g.hasMatch()) {
        abandonChain();
        m_groupColumn = int(g.capturedLength(1));
        m_state = State::Frames;
        return true;
    }
    if (const QRegularExpressionMatch f = frameRegex().match(line);
        f.hasMatch() && !f.hasCaptured(3)) {
        // A SyntaxError in the main script prints its location without a traceback header.
        abandonChain();
        m_syntaxOnly = true;
        m_state = State::Frames;
        frameLine(line);
        return true;
    }
    if (const QRegularExpressionMatch m = fatalHeader().match(line); m.hasMatch()) {
        m_lastDump = PythonFaultDump();
        m_dumpFrames = 0;
        m_lastDump.fatalError = m.captured(1).left(MaxMessage);
        ++m_generation;
        m_state = State::Dump;
        return true;
    }
    if (threadHeader().match(line).hasMatch() || stackHeader().match(line).hasMatch()) {
        // A dump on request (a hang, faulthandler.register) has no "Fatal Python error" line.
        m_lastDump = PythonFaultDump();
        m_dumpFrames = 0;
        m_state = State::Dump;
        dumpLine(line);
        return true;
    }
    return false;
}

QString PythonTracebackReader::unwrapGroup(const QString &line, bool *inGroup) const
{
    *inGroup = false;
    const int col = m_groupColumn;
    if (col < 0 || line.size() <= col || line.at(col) != u'|')
        return {};
    for (int i = 0; i < col; ++i)
        if (line.at(i) != u' ')
            return {};
    *inGroup = true;
    return line.mid(col + 2);
}

void PythonTracebackReader::frameLine(const QString &rawLine)
{
    QString line = rawLine;
    if (m_groupColumn >= 0) {
        bool bar = false;
        line = unwrapGroup(rawLine, &bar);
        if (!bar) {
            // The group's sub-exceptions ("+-+---- 1 ----") before its own exception line, or
            // the group was cut off.
            abandonChain();
            startsSomething(rawLine);
            return;
        }
    }
    if (const QRegularExpressionMatch m = frameRegex().match(line); m.hasMatch()) {
        PythonFrame f;
        f.file = m.captured(1).left(MaxFile);
        f.line = m.captured(2).toInt();
        f.function = m.captured(3).left(MaxFunction);
        m_frames.append(f);
        // Keep the innermost: drop the outermost in batches so that 10^6 frames stay linear.
        if (m_frames.size() >= qsizetype{2} * MaxFrames) {
            const qsizetype drop = m_frames.size() - MaxFrames;
            m_frames.remove(0, drop);
            m_framesOmitted += int(drop);
        }
        return;
    }
    if (startsWithSpace(line)) {
        const QString trimmed = line.trimmed();
        if (m_frames.isEmpty() || trimmed.isEmpty() || markerLine().match(line).hasMatch() ||
            trimmed.startsWith(QLatin1String("[Previous line repeated")))
            return;
        // Python 3.13 prints multi-line statements whole: the first line says enough.
        if (m_frames.last().source.isEmpty())
            m_frames.last().source = trimmed.left(MaxSource);
        return;
    }
    if (const QRegularExpressionMatch e = exceptionLine().match(line);
        e.hasMatch() && (!m_syntaxOnly || isSyntaxErrorType(e.captured(1)))) {
        finishException(e.captured(1), e.captured(2));
        return;
    }
    // A blank line or foreign text inside the frames: this traceback was cut off.
    abandonChain();
    startsSomething(rawLine);
}

void PythonTracebackReader::finishException(const QString &type, const QString &message)
{
    PythonException e;
    e.type = type.left(MaxType);
    e.message = message.left(MaxMessage);
    e.chainedBy = m_pendingChainedBy;
    if (m_frames.size() > MaxFrames) {
        const qsizetype drop = m_frames.size() - MaxFrames;
        m_frames.remove(0, drop);
        m_framesOmitted += int(drop);
    }
    e.frames.reserve(m_frames.size());
    for (qsizetype i = m_frames.size() - 1; i >= 0; --i)
        e.frames.append(m_frames[i]);
    e.framesOmitted = m_framesOmitted;
    m_chain.append(e);
    if (m_chain.size() > MaxChain)
        m_chain.removeFirst();
    m_frames.clear();
    m_framesOmitted = 0;
    m_pendingChainedBy.clear();
    m_syntaxOnly = false;
    m_messageLines = 1;
    publishChain();
    m_state = m_groupColumn >= 0 ? State::GroupTail : State::Message;
}

void PythonTracebackReader::appendMessage(const QString &line)
{
    if (m_chain.isEmpty())
        return;
    QString &message = m_chain.last().message;
    if (message.size() + line.size() + 1 > MaxMessage) {
        m_messageLines = MaxMessageLines; // bounded: later lines end the block
        return;
    }
    message += QLatin1Char('\n') + line;
    ++m_messageLines;
    publishChain();
}

void PythonTracebackReader::publishChain()
{
    m_lastChain = m_chain;
    ++m_generation;
}

void PythonTracebackReader::abandonChain()
{
    m_chain.clear();
    m_frames.clear();
    m_framesOmitted = 0;
    m_pendingChainedBy.clear();
    m_syntaxOnly = false;
    m_groupColumn = -1;
    m_messageLines = 0;
    m_state = State::Idle;
}

void PythonTracebackReader::dumpLine(const QString &line)
{
    if (line.trimmed().isEmpty())
        return;
    QList<PythonThreadStack> &threads = m_lastDump.threads;
    if (const QRegularExpressionMatch m = threadHeader().match(line); m.hasMatch()) {
        const QString id = m.captured(2).left(MaxThreadId);
        // The same thread again: a new dump (faulthandler.dump_traceback_later repeats).
        for (const PythonThreadStack &t : std::as_const(threads)) {
            if (t.threadId == id) {
                m_lastDump = PythonFaultDump();
                m_dumpFrames = 0;
                break;
            }
        }
        m_dumpSkipping = threads.size() >= MaxThreads;
        if (!m_dumpSkipping) {
            PythonThreadStack t;
            t.threadId = id;
            t.current = m.captured(1) == QLatin1String("Current thread");
            threads.append(t);
            ++m_generation;
        }
        return;
    }
    if (stackHeader().match(line).hasMatch()) {
        if (!threads.isEmpty()) {
            m_lastDump = PythonFaultDump(); // a one-thread dump has one header: this is new
            m_dumpFrames = 0;
        }
        PythonThreadStack t;
        t.current = true;
        threads.append(t);
        ++m_generation;
        m_dumpSkipping = false;
        return;
    }
    if (startsWithSpace(line)) {
        if (m_dumpSkipping)
            return;
        if (threads.isEmpty()) {
            PythonThreadStack t;
            t.current = true;
            threads.append(t);
        }
        PythonThreadStack &t = threads.last();
        if (const QRegularExpressionMatch f = dumpFrame().match(line); f.hasMatch()) {
            if (t.frames.size() >= MaxThreadFrames || m_dumpFrames >= MaxDumpFrames) {
                if (!t.note.contains(QLatin1String("...")))
                    addNote(t, QStringLiteral("..."));
                return;
            }
            PythonFrame frame;
            frame.file = f.captured(1).left(MaxFile);
            frame.line = f.captured(2).toInt(); // "???" → 0
            frame.function = f.captured(3).left(MaxFunction);
            t.frames.append(frame);
            ++m_dumpFrames;
            ++m_generation;
            return;
        }
        const QString trimmed = line.trimmed();
        // "<no Python frame>", "...", "Garbage-collecting" and the like.
        if (trimmed.size() <= MaxNoteLine)
            addNote(t, trimmed);
        ++m_generation;
        return;
    }
    if (line.startsWith(QLatin1String("Extension modules:")) ||
        line.startsWith(QLatin1String("Python runtime state:")) ||
        line.startsWith(QLatin1String("Thread 0x")))
        return;
    if (line.contains(QLatin1String("C stack trace")) && line.endsWith(QLatin1Char(':'))) {
        m_state = State::DumpCStack;
        return;
    }
    m_state = State::Idle;
    m_dumpSkipping = false;
    startsSomething(line);
}

} // namespace rankdeck
