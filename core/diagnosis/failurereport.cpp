// SPDX-License-Identifier: GPL-3.0-or-later
// Longer than the house's ~600 lines: the report's rules (root cause, merging, consequences)
// and its three forms (text, JSON, and the parsers of crash events, crash files and stack
// dumps that feed it) are tested together in tst_failurereport and change together.
#include "diagnosis/failurereport.h"

#include "diagnosis/failuregrouping.h"
#include "diagnosis/pythonfailure.h"
#include "util/translation.h"

#include "wire/wireprotocol.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

#include <algorithm>
#include <csignal>
#include <limits>

namespace rankdeck {

namespace {

QString key(std::string_view k)
{
    return QString::fromLatin1(k.data(), static_cast<qsizetype>(k.size()));
}

} // namespace

QString signalNameForNumber(int sig)
{
    switch (sig) {
    case SIGHUP:
        return QStringLiteral("SIGHUP");
    case SIGINT:
        return QStringLiteral("SIGINT");
    case SIGQUIT:
        return QStringLiteral("SIGQUIT");
    case SIGILL:
        return QStringLiteral("SIGILL");
    case SIGTRAP:
        return QStringLiteral("SIGTRAP");
    case SIGABRT:
        return QStringLiteral("SIGABRT");
    case SIGBUS:
        return QStringLiteral("SIGBUS");
    case SIGFPE:
        return QStringLiteral("SIGFPE");
    case SIGKILL:
        return QStringLiteral("SIGKILL");
    case SIGUSR1:
        return QStringLiteral("SIGUSR1");
    case SIGSEGV:
        return QStringLiteral("SIGSEGV");
    case SIGUSR2:
        return QStringLiteral("SIGUSR2");
    case SIGPIPE:
        return QStringLiteral("SIGPIPE");
    case SIGALRM:
        return QStringLiteral("SIGALRM");
    case SIGTERM:
        return QStringLiteral("SIGTERM");
    case SIGXCPU:
        return QStringLiteral("SIGXCPU");
    case SIGXFSZ:
        return QStringLiteral("SIGXFSZ");
    case SIGSYS:
        return QStringLiteral("SIGSYS");
    default:
        return {};
    }
}

namespace {

QString signalText(int sig, const QString &name)
{
    const QString n = name.isEmpty() ? signalNameForNumber(sig) : name;
    if (n.isEmpty())
        return tr("signal %1").arg(sig);
    return tr("%1 (signal %2)").arg(n).arg(sig);
}

QString formatTime(qint64 timeUs)
{
    if (timeUs <= 0)
        return tr("time unknown");
    const QDateTime t = QDateTime::fromMSecsSinceEpoch(timeUs / 1000, Qt::UTC);
    return t.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz")) +
           QStringLiteral("%1 UTC").arg(timeUs % 1000, 3, 10, QLatin1Char('0'));
}

bool isConsequence(const RankFailure &f)
{
    return f.kind == QLatin1String("consequence");
}

// How informative a record of one rank is: the worker's own report beats what the launcher saw.
int detailLevel(const RankFailure &f)
{
    if (f.kind == QLatin1String("crash") || f.kind == QLatin1String("exception"))
        return 3;
    if (f.kind == QLatin1String("error"))
        return 2;
    if (!f.kind.isEmpty() && !isConsequence(f))
        return 1;
    return 0;
}

RankFailure merge(const QList<RankFailure> &records)
{
    RankFailure best = records.first();
    for (const RankFailure &f : records)
        if (detailLevel(f) > detailLevel(best))
            best = f;
    for (const RankFailure &f : records) {
        if (best.exitCode == 0 && f.exitCode != 0)
            best.exitCode = f.exitCode;
        if (best.signal == 0 && f.signal != 0) {
            best.signal = f.signal;
            best.signalName = f.signalName;
        }
        if (best.host.isEmpty())
            best.host = f.host;
        if (best.localRank < 0)
            best.localRank = f.localRank;
        if (best.message.isEmpty())
            best.message = f.message;
        if (best.stack.isEmpty() && !f.stack.isEmpty()) {
            best.stack = f.stack;
            best.firstOwnFrame = f.firstOwnFrame;
        }
        if (best.reason.isEmpty())
            best.reason = f.reason;
        if (best.timeUs <= 0 && f.timeUs > 0)
            best.timeUs = f.timeUs;
        if (best.pid == 0)
            best.pid = f.pid;
        if (best.thread.isEmpty())
            best.thread = f.thread;
        if (best.buildId.isEmpty())
            best.buildId = f.buildId;
        if (best.reportPath.isEmpty())
            best.reportPath = f.reportPath;
        if (best.python.isEmpty())
            best.python = f.python;
        if (best.pythonDump.isEmpty())
            best.pythonDump = f.pythonDump;
        if (best.child.isEmpty())
            best.child = f.child;
    }
    if (best.firstOwnFrame < 0 || best.firstOwnFrame >= best.stack.size())
        best.firstOwnFrame = firstOwnFrame(best.stack);
    // The traceback may have come with a less detailed record of the rank (its exit).
    mergePython(&best, best.python, best.pythonDump);
    return best;
}

qint64 sortTime(const RankFailure &f)
{
    return f.timeUs > 0 ? f.timeUs : std::numeric_limits<qint64>::max();
}

QString rankHeader(const RankFailure &f)
{
    QString s = f.rank >= 0 ? tr("rank %1").arg(f.rank) : tr("unknown rank");
    if (f.localRank >= 0)
        s += tr(" (local rank %1)").arg(f.localRank);
    if (!f.host.isEmpty())
        s += tr(" on %1").arg(f.host);
    return s;
}

const QRegularExpression &frameRegex()
{
    // "#3 0x00005581 in ns::f(int) (inlined) at /src/x.cpp:42 [module]" — every part after the
    // function optional; the module may carry "+0xOFFSET" when the function is unknown.
    static const QRegularExpression re(QStringLiteral(
        R"(^\s*#(\d+)\s+(0x[0-9a-fA-F]+)\s+in\s+(.*?)( \(inlined\))?(?: at (.+?)(?::(\d+))?)?(?: \[([^\[\]]+)\])?\s*$)"));
    return re;
}

const QRegularExpression &collectiveRegex()
{
    static const QRegularExpression re(QStringLiteral(
        R"(c10d::|gloo::|nccl|ProcessGroup|[Aa]ll[Rr]educe|all_reduce|[Bb]arrier|[Bb]roadcast|[Aa]llgather|TCPStore)"));
    return re;
}

// OpenMP's runtime (GNU libgomp, LLVM/Intel libomp): its pool threads wait for work in
// gomp_barrier_wait_end or __kmp_wait_template, whose names say "barrier" but which are no
// collective of the program's (issue 27: every CPU rank showed one "waits in a collective").
bool isOpenMpRuntime(const QString &function)
{
    static const QRegularExpression re(
        QStringLiteral(R"(^(?:gomp_|GOMP_|__kmp|__kmpc|kmp_|omp_))"));
    return re.match(function).hasMatch();
}

bool isCollectiveFrame(const QString &function)
{
    return !function.isEmpty() && !isOpenMpRuntime(function) &&
           collectiveRegex().match(function).hasMatch();
}

// A deployed worker carries its build id in its file name ("rankdeck-worker-<hash>").
bool isOwnModule(const QString &module, const QString &ownModule)
{
    return module == ownModule ||
           (module.size() > ownModule.size() + 1 && module.startsWith(ownModule) &&
            module.at(ownModule.size()) == QLatin1Char('-'));
}

// Inlined standard-library code shows up in the worker's module too, but it is never where the
// worker's own logic is.
bool isLibraryCode(const FrameParts &p)
{
    static const QRegularExpression stdName(
        QStringLiteral(R"(^(?:[\w:<>, ]+ )?(?:std|__gnu_cxx|__cxxabiv1)::)"));
    return p.file.startsWith(QLatin1String("/usr/include/")) ||
           stdName.match(p.function).hasMatch();
}

QString shortFunction(const QString &function)
{
    constexpr int kMax = 160;
    return function.size() > kMax ? function.left(kMax) + QStringLiteral("…") : function;
}

} // namespace

QJsonObject ChildFailure::toJson() const
{
    QJsonObject o;
    o[QStringLiteral("pid")] = pid;
    o[QStringLiteral("role")] = role;
    o[QStringLiteral("signal")] = signal;
    o[QStringLiteral("signal_name")] = signalName;
    o[QStringLiteral("exit_code")] = exitCode;
    return o;
}

ChildFailure ChildFailure::fromJson(const QJsonObject &json)
{
    ChildFailure c;
    c.pid = json.value(QStringLiteral("pid")).toInteger(0);
    c.role = json.value(QStringLiteral("role")).toString().left(100);
    c.signal = json.value(QStringLiteral("signal")).toInt(0);
    c.signalName = json.value(QStringLiteral("signal_name")).toString().left(20);
    c.exitCode = json.value(QStringLiteral("exit_code")).toInt(0);
    return c;
}

QString ChildFailure::summary() const
{
    const QString how =
        signal != 0 ? signalText(signal, signalName) : tr("exit code %1").arg(exitCode);
    return tr("%1 in %2").arg(how, who());
}

QString ChildFailure::who() const
{
    return pid > 0 ? tr("%1 (pid %2)").arg(role).arg(pid) : tr("a %1").arg(role);
}

QJsonObject RankFailure::toJson() const
{
    QJsonObject o;
    o[QStringLiteral("rank")] = rank;
    o[QStringLiteral("host")] = host;
    o[QStringLiteral("local_rank")] = localRank;
    o[QStringLiteral("time_us")] = timeUs;
    if (clockOffsetUs != 0)
        o[QStringLiteral("clock_offset_us")] = clockOffsetUs;
    o[QStringLiteral("kind")] = kind;
    o[QStringLiteral("exit_code")] = exitCode;
    o[QStringLiteral("signal")] = signal;
    o[QStringLiteral("signal_name")] = signalName;
    o[QStringLiteral("exception")] = exceptionType;
    o[QStringLiteral("message")] = message;
    o[QStringLiteral("stack")] = QJsonArray::fromStringList(stack);
    o[QStringLiteral("first_own_frame")] = firstOwnFrame;
    o[QStringLiteral("reason")] = reason;
    o[QStringLiteral("root_cause")] = rootCause;
    o[QStringLiteral("pid")] = pid;
    o[QStringLiteral("thread")] = thread;
    o[QStringLiteral("build_id")] = buildId;
    o[QStringLiteral("report_path")] = reportPath;
    if (!python.isEmpty())
        o[QStringLiteral("python")] = pythonChainToJson(python);
    if (!pythonDump.isEmpty())
        o[QStringLiteral("python_dump")] = pythonDump.toJson();
    if (!child.isEmpty())
        o[QStringLiteral("child")] = child.toJson();
    return o;
}

RankFailure RankFailure::fromJson(const QJsonObject &json)
{
    RankFailure f;
    f.rank = json.value(QStringLiteral("rank")).toInt(-1);
    f.host = json.value(QStringLiteral("host")).toString();
    f.localRank = json.value(QStringLiteral("local_rank")).toInt(-1);
    f.timeUs = json.value(QStringLiteral("time_us")).toInteger(0);
    f.clockOffsetUs = json.value(QStringLiteral("clock_offset_us")).toInteger(0);
    f.kind = json.value(QStringLiteral("kind")).toString();
    f.exitCode = json.value(QStringLiteral("exit_code")).toInt(0);
    f.signal = json.value(QStringLiteral("signal")).toInt(0);
    f.signalName = json.value(QStringLiteral("signal_name")).toString();
    f.exceptionType = json.value(QStringLiteral("exception")).toString();
    f.message = json.value(QStringLiteral("message")).toString();
    for (const QJsonArray items = json.value(QStringLiteral("stack")).toArray();
         const auto &v : items)
        f.stack << v.toString();
    f.firstOwnFrame = json.value(QStringLiteral("first_own_frame")).toInt(-1);
    if (f.firstOwnFrame >= f.stack.size())
        f.firstOwnFrame = -1;
    f.reason = json.value(QStringLiteral("reason")).toString();
    f.rootCause = json.value(QStringLiteral("root_cause")).toBool(false);
    f.pid = json.value(QStringLiteral("pid")).toInteger(0);
    f.thread = json.value(QStringLiteral("thread")).toString();
    f.buildId = json.value(QStringLiteral("build_id")).toString();
    f.reportPath = json.value(QStringLiteral("report_path")).toString();
    // Records from before Python support have neither.
    f.python = pythonChainFromJson(json.value(QStringLiteral("python")).toArray());
    f.pythonDump = PythonFaultDump::fromJson(json.value(QStringLiteral("python_dump")).toObject());
    f.child = ChildFailure::fromJson(json.value(QStringLiteral("child")).toObject());
    return f;
}

bool RankFailure::endedByChild() const
{
    return !child.isEmpty() && (kind == QLatin1String("exception") ||
                                kind == QLatin1String("error") || kind == QLatin1String("exit"));
}

QString RankFailure::summary() const
{
    if (endedByChild())
        return rank >= 0 ? tr("%1 of rank %2").arg(child.summary()).arg(rank) : child.summary();
    if (!python.isEmpty() && (kind == QLatin1String("exception") ||
                              kind == QLatin1String("error") || kind == QLatin1String("exit")))
        return pythonSummary(python);
    if (kind == QLatin1String("crash"))
        return signalText(signal, signalName);
    if (kind == QLatin1String("exception"))
        return tr("uncaught exception %1")
            .arg(exceptionType.isEmpty() ? tr("(unknown type)") : exceptionType);
    if (kind == QLatin1String("error"))
        return tr("error, exit code %1").arg(exitCode);
    if (kind == QLatin1String("exit"))
        return tr("exit code %1").arg(exitCode);
    if (kind == QLatin1String("signal"))
        return tr("killed by %1").arg(signalText(signal, signalName));
    if (kind == QLatin1String("lost"))
        return tr("lost");
    if (kind == QLatin1String("hang"))
        return tr("hung");
    if (kind == QLatin1String("collective"))
        return message.section(QLatin1Char('\n'), 0, 0);
    if (kind == QLatin1String("consequence")) {
        if (signal != 0)
            return tr("stopped as a consequence, killed by %1").arg(signalText(signal, signalName));
        return tr("stopped as a consequence, exit code %1").arg(exitCode);
    }
    return kind;
}

FailureReport FailureReport::build(QList<RankFailure> observed)
{
    // Group by rank, keeping the order ranks first appeared in.
    QList<QList<RankFailure>> groups;
    for (const RankFailure &f : std::as_const(observed)) {
        bool placed = false;
        if (f.rank >= 0) {
            for (auto &g : groups) {
                if (g.first().rank == f.rank) {
                    g << f;
                    placed = true;
                    break;
                }
            }
        }
        if (!placed)
            groups.append(QList<RankFailure>{f});
    }
    QList<RankFailure> merged;
    merged.reserve(groups.size());
    for (const auto &g : std::as_const(groups)) {
        RankFailure m = merge(g);
        m.rootCause = false;
        merged << m;
    }

    auto earlier = [](const RankFailure &a, const RankFailure &b) {
        const qint64 ta = sortTime(a), tb = sortTime(b);
        if (ta != tb)
            return ta < tb;
        return a.rank < b.rank;
    };
    std::stable_sort(merged.begin(), merged.end(), earlier);

    FailureReport report;
    if (merged.isEmpty())
        return report;
    qsizetype root = -1;
    // The rank the flight recorder named (its collective differs, or the others wait for it)
    // comes before the first failure by time: under a desync the first rank to die is a victim.
    for (qsizetype i = 0; i < merged.size() && root < 0; ++i)
        if (merged[i].kind == QLatin1String("collective"))
            root = i;
    for (qsizetype i = 0; i < merged.size() && root < 0; ++i) {
        if (!isConsequence(merged[i])) {
            root = i;
            break;
        }
    }
    if (root < 0)
        root = 0;
    merged[root].rootCause = true;
    merged[root].reason.clear();
    report.failures << merged[root];
    for (qsizetype i = 0; i < merged.size(); ++i) {
        if (i == root)
            continue;
        RankFailure f = merged[i];
        if (f.reason.isEmpty() && isConsequence(f) && merged[root].rank >= 0)
            f.reason = tr("stopped by the launcher after rank %1 failed").arg(merged[root].rank);
        report.failures << f;
    }
    return report;
}

const RankFailure *FailureReport::rootCause() const
{
    for (const RankFailure &f : failures)
        if (f.rootCause)
            return &f;
    return nullptr;
}

QString FailureReport::toText() const
{
    if (failures.isEmpty())
        return tr("No failures.\n");
    QString out;
    const RankFailure *root = rootCause();
    const RankFailure &r = root ? *root : failures.first();
    out += r.kind == QLatin1String("collective")
               ? tr("Root cause (named by the flight recorder): %1\n").arg(rankHeader(r))
               : tr("Root cause (first failure): %1\n").arg(rankHeader(r));
    // Under a millisecond is below what the measurement (and the text) can tell.
    if (qAbs(r.clockOffsetUs) >= 1000)
        out += tr("  time:    %1 (on this computer's clock; the node's clock is %2 s %3)\n")
                   .arg(formatTime(r.timeUs))
                   .arg(double(qAbs(r.clockOffsetUs)) / 1e6, 0, 'f', 3)
                   .arg(r.clockOffsetUs < 0 ? tr("behind") : tr("ahead"));
    else
        out += tr("  time:    %1\n").arg(formatTime(r.timeUs));
    out += tr("  what:    %1\n").arg(r.summary());
    if (r.kind == QLatin1String("collective")) {
        // The headline is `what`; the verdict's paragraph follows.
        out += tr("  verdict: %1\n").arg(r.message.section(QLatin1Char('\n'), 1));
    } else if (!r.message.isEmpty()) {
        const QStringList lines = r.message.split(QLatin1Char('\n'));
        out += tr("  message: %1\n").arg(lines.first());
        for (qsizetype i = 1; i < lines.size(); ++i)
            out += QStringLiteral("           %1\n").arg(lines[i]);
    }
    if (r.kind == QLatin1String("exception") || r.kind == QLatin1String("error")) {
        if (r.signal != 0)
            out += tr("  exit:    %1\n").arg(signalText(r.signal, r.signalName));
        else if (r.exitCode != 0)
            out += tr("  exit:    exit code %1\n").arg(r.exitCode);
    }
    if (!r.thread.isEmpty() || r.pid != 0)
        out +=
            tr("  thread:  %1, pid %2\n").arg(r.thread.isEmpty() ? tr("?") : r.thread).arg(r.pid);
    out += pythonFailureText(r, QStringLiteral("  "));
    if (!r.stack.isEmpty()) {
        // The program's own code: the worker's, or a user's native program's.
        const QString own = r.firstOwnFrame >= 0 && r.firstOwnFrame < r.stack.size()
                                ? parseFrame(r.stack[r.firstOwnFrame]).module
                                : QString();
        out += !own.isEmpty() ? tr("  stack (most recent call first; → marks the first frame "
                                   "of %1's own code):\n")
                                    .arg(own)
                              : tr("  stack (most recent call first):\n");
        for (qsizetype i = 0; i < r.stack.size(); ++i)
            out += (i == r.firstOwnFrame ? QStringLiteral("  → ") : QStringLiteral("    ")) +
                   r.stack[i] + QLatin1Char('\n');
    } else if ((r.kind == QLatin1String("signal") || r.kind == QLatin1String("exit")) &&
               r.python.isEmpty() && r.pythonDump.isEmpty()) {
        out += tr("  stack:   none (the rank sent no crash report before it ended)\n");
    }
    if (!r.reportPath.isEmpty())
        out += tr("  report:  %1 (on the node)\n").arg(r.reportPath);
    if (!r.reason.isEmpty())
        out += tr("  reason:  %1\n").arg(r.reason);

    bool header = false;
    // Ranks that failed alike are one entry, shown by their earliest.
    for (const FailureGroup &g : groups()) {
        const RankFailure &f = g.representative;
        const QString same = f.python.isEmpty() ? tr("same failure") : tr("same traceback");
        if (f == r) {
            if (g.ranks.size() > 1)
                out += tr("  ranks %1: %2 as rank %3 above\n")
                           .arg(formatRankRanges(g.ranks), same)
                           .arg(r.rank);
            continue;
        }
        if (!header) {
            out += tr("\nOther ranks:\n");
            header = true;
        }
        QString when;
        if (f.timeUs > 0 && r.timeUs > 0) {
            const double delta = double(f.timeUs - r.timeUs) / 1e6;
            when = QStringLiteral("%1%2 s")
                       .arg(delta >= 0 ? QStringLiteral("+") : QString())
                       .arg(delta, 0, 'f', 3);
        } else {
            when = formatTime(f.timeUs);
        }
        if (g.sameAsRoot) {
            // Printed once, above: only how this rank ended, where that differs.
            out += tr("  %1, %2: %3 as rank %4 above").arg(rankHeader(f), when, same).arg(r.rank);
            if (f.signal != r.signal || f.exitCode != r.exitCode)
                out += f.signal != 0
                           ? tr("; then killed by %1").arg(signalText(f.signal, f.signalName))
                           : tr("; exit code %1").arg(f.exitCode);
            if (!f.reason.isEmpty())
                out += tr(" — %1").arg(f.reason);
            out += QLatin1Char('\n');
            if (g.ranks.size() > 1)
                out += tr("      ranks %1: %2 as rank %3 above (%4 ranks)\n")
                           .arg(formatRankRanges(g.ranks), same)
                           .arg(r.rank)
                           .arg(g.ranks.size());
            continue;
        }
        out += tr("  %1, %2: %3").arg(rankHeader(f), when, f.summary());
        if (!f.reason.isEmpty())
            out += tr(" — %1").arg(f.reason);
        out += QLatin1Char('\n');
        if (g.ranks.size() > 1)
            out += tr("      ranks %1: %2 as rank %3 (%4 ranks)\n")
                       .arg(formatRankRanges(g.ranks), same)
                       .arg(f.rank)
                       .arg(g.ranks.size());
        if (!f.message.isEmpty() && f.kind != QLatin1String("collective")) {
            // One line per rank: the root cause above has the full text.
            constexpr qsizetype kMaxMessage = 200;
            QString first = f.message.section(QLatin1Char('\n'), 0, 0);
            if (first.size() > kMaxMessage)
                first = first.left(kMaxMessage) + QStringLiteral("…");
            out += tr("      message: %1\n").arg(first);
        }
        out += pythonFailureText(f, QStringLiteral("      "));
        if (!f.stack.isEmpty()) {
            // A hung rank's stack dump holds every thread; the main thread shows where it waits.
            QStringList frames = f.stack;
            const QList<ThreadStack> threads = parseThreadStacks(f.stack.join(QLatin1Char('\n')));
            for (const ThreadStack &t : threads)
                if (t.mainThread)
                    frames = t.frames;
            const QString where = waitLocation(frames);
            if (!where.isEmpty())
                out += tr("      in: %1\n").arg(where);
        }
    }
    return out;
}

QJsonObject FailureReport::toJson() const
{
    QJsonArray list;
    for (const RankFailure &f : failures)
        list.append(f.toJson());
    QJsonObject o;
    o[QStringLiteral("schema_version")] = 1;
    o[QStringLiteral("failures")] = list;
    return o;
}

FailureReport FailureReport::fromJson(const QJsonObject &json)
{
    FailureReport r;
    for (const QJsonArray items = json.value(QStringLiteral("failures")).toArray();
         const auto &v : items)
        if (v.isObject())
            r.failures << RankFailure::fromJson(v.toObject());
    return r;
}

RankFailure failureFromCrashEvent(const QJsonObject &e)
{
    RankFailure f;
    f.rank = e.value(key(wire::field::Rank)).toInt(-1);
    f.timeUs = e.value(key(wire::field::Time)).toInteger(0);
    f.host = e.value(key(wire::field::Host)).toString();
    const bool exception = e.value(key(wire::field::Kind)).toString() == QLatin1String("exception");
    f.kind = exception ? QStringLiteral("exception") : QStringLiteral("crash");
    if (!exception) {
        f.signal = e.value(key(wire::field::Signal)).toInt(0);
        f.signalName = e.value(key(wire::field::SignalName)).toString();
        if (f.signalName.isEmpty())
            f.signalName = signalNameForNumber(f.signal);
    }
    f.exceptionType = e.value(key(wire::field::ExceptionType)).toString();
    f.message = e.value(key(wire::field::Message)).toString();
    f.thread = e.value(key(wire::field::Thread)).toString();
    f.pid = e.value(key(wire::field::Pid)).toInteger(0);
    f.buildId = e.value(key(wire::field::BuildId)).toString();
    f.reportPath = e.value(key(wire::field::Path)).toString();
    const QString stack = e.value(key(wire::field::Stack)).toString();
    if (!stack.isEmpty())
        f.stack = stack.split(QLatin1Char('\n'));
    // NCCL's watchdog aborts a survivor whose collective timed out or whose peer died: say so,
    // so that the echo of another rank's failure is not mistaken for a cause of its own.
    if (f.signal == SIGABRT &&
        !f.message.contains(QLatin1String("watchdog"), Qt::CaseInsensitive)) {
        static const QRegularExpression watchdog(
            QStringLiteral(R"(ProcessGroupNCCL::(Watchdog|HeartbeatMonitor)::|ncclCommWatchdog)"));
        for (const QString &frame : std::as_const(f.stack)) {
            if (watchdog.match(frame).hasMatch()) {
                f.message += tr(" (by the NCCL watchdog: a collective timed out or a peer failed)");
                break;
            }
        }
    }
    const QJsonValue own = e.value(key(wire::field::OwnFrame));
    f.firstOwnFrame = own.isDouble() ? own.toInt(-1) : firstOwnFrame(f.stack);
    if (f.firstOwnFrame < -1 || f.firstOwnFrame >= f.stack.size())
        f.firstOwnFrame = firstOwnFrame(f.stack);
    return f;
}

RankFailure failureFromCrashReportFile(const QByteArray &contents)
{
    const QList<QByteArray> lines = contents.split('\n');
    for (qsizetype i = lines.size() - 1; i >= 0; --i) {
        const QByteArray &line = lines[i];
        const wire::WireEventMatch m =
            wire::findWireEvent(std::string_view(line.constData(), size_t(line.size())));
        if (!m.valid)
            continue;
        const QJsonDocument doc =
            QJsonDocument::fromJson(QByteArray(m.json.data(), qsizetype(m.json.size())));
        if (!doc.isObject())
            continue;
        if (doc.object().value(key(wire::field::Type)).toString() != key(wire::event::Crash))
            continue;
        return failureFromCrashEvent(doc.object());
    }
    return {};
}

QList<ThreadStack> parseThreadStacks(const QString &stacksText)
{
    static const QRegularExpression header(QStringLiteral(R"(^thread (\d+) \((.*)\):\s*$)"));
    QList<ThreadStack> threads;
    const QStringList lines = stacksText.split(QLatin1Char('\n'));
    for (const QString &line : lines) {
        const QRegularExpressionMatch m = header.match(line);
        if (m.hasMatch()) {
            ThreadStack t;
            t.tid = m.captured(1).toLongLong();
            t.name = m.captured(2);
            const QString mark = QStringLiteral(", main thread");
            if (t.name.endsWith(mark)) {
                t.mainThread = true;
                t.name.chop(mark.size());
            }
            threads << t;
            continue;
        }
        if (threads.isEmpty())
            continue;
        const QString trimmed = line.trimmed();
        if (trimmed.startsWith(QLatin1Char('#')))
            threads.last().frames << trimmed;
        else if (trimmed.startsWith(QLatin1Char('(')) && trimmed.endsWith(QLatin1Char(')')))
            threads.last().note = trimmed.mid(1, trimmed.size() - 2);
    }
    return threads;
}

QList<ThreadStack> threadStacksFromEvent(const QJsonObject &event)
{
    return parseThreadStacks(event.value(key(wire::field::Stack)).toString());
}

FrameParts parseFrame(const QString &frameLine)
{
    FrameParts p;
    const QRegularExpressionMatch m = frameRegex().match(frameLine);
    if (!m.hasMatch())
        return p;
    p.index = m.captured(1).toInt();
    p.pc = m.captured(2);
    p.function = m.captured(3);
    if (p.function == QLatin1String("??"))
        p.function.clear();
    p.inlined = !m.captured(4).isEmpty();
    p.file = m.captured(5);
    p.line = m.captured(6).toInt();
    p.module = m.captured(7);
    if (const qsizetype plus = p.module.lastIndexOf(QLatin1String("+0x")); plus > 0)
        p.module.truncate(plus);
    return p;
}

int firstOwnFrame(const QStringList &stack, const QString &ownModule)
{
    for (qsizetype i = 0; i < stack.size(); ++i) {
        const FrameParts p = parseFrame(stack[i]);
        if (p.index < 0 || !isOwnModule(p.module, ownModule))
            continue;
        // The crash handler's own frames are plumbing, not the failing code.
        if (p.function.startsWith(QLatin1String("rankdeck::crash::")) ||
            p.function == QLatin1String("__cxa_throw") || isLibraryCode(p))
            continue;
        return int(i);
    }
    return -1;
}

bool waitsInCollective(const QStringList &frames)
{
    // The threads c10d, Gloo and NCCL keep for themselves (event loops, the store's daemon,
    // watchdogs) always sit in their code: they wait for work, not for a peer. Gloo's work loop
    // (the pt_gloo_runloop thread) is the exception: it runs the collectives of async work
    // (DDP's all-reduce), so inside gloo::allreduce/waitRecv it does wait for its peers; idle,
    // it waits on a condition variable with no collective frame inside the loop.
    static const QRegularExpression serviceLoop(QStringLiteral(
        R"(tcp::Loop::run\b|ProcessGroupGloo::runLoop|StoreDaemon::run|Watchdog|HeartbeatMonitor|ncclProxy|workCleanupLoop)"));
    static const QRegularExpression glooWorkLoop(QStringLiteral(R"(ProcessGroupGloo::runLoop)"));
    bool collective = false;
    for (const QString &line : frames) {
        const FrameParts p = parseFrame(line);
        if (p.function.isEmpty())
            continue;
        // An OpenMP pool thread is idle or computing, never in a collective.
        if (p.function.startsWith(QLatin1String("gomp_thread_start")) ||
            p.function.startsWith(QLatin1String("__kmp_launch_thread")))
            return false;
        if (serviceLoop.match(p.function).hasMatch())
            return collective && glooWorkLoop.match(p.function).hasMatch();
        collective = collective || isCollectiveFrame(p.function);
    }
    return collective;
}

QString waitLocation(const QStringList &frames, const QString &ownModule)
{
    QList<FrameParts> parts;
    for (const QString &line : frames)
        parts << parseFrame(line);
    auto ownCaller = [&](qsizetype from) -> QString {
        for (qsizetype i = from; i < parts.size(); ++i) {
            const FrameParts &p = parts[i];
            if (isOwnModule(p.module, ownModule) && !p.function.isEmpty() && !isLibraryCode(p)) {
                QString s = shortFunction(p.function);
                if (!p.file.isEmpty())
                    s += QStringLiteral(" (%1:%2)")
                             .arg(p.file.section(QLatin1Char('/'), -1))
                             .arg(p.line);
                return s;
            }
        }
        return {};
    };
    for (qsizetype i = 0; i < parts.size(); ++i) {
        if (isCollectiveFrame(parts[i].function)) {
            const QString caller = ownCaller(i + 1);
            return caller.isEmpty()
                       ? shortFunction(parts[i].function)
                       : tr("%1, called from %2").arg(shortFunction(parts[i].function), caller);
        }
    }
    QString own = ownCaller(0);
    if (!own.isEmpty())
        return own;
    for (const FrameParts &p : parts)
        if (!p.function.isEmpty())
            return shortFunction(p.function);
    return {};
}

} // namespace rankdeck
