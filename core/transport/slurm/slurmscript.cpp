// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/slurm/slurmscript.h"

#include "util/shellquote.h"

#include <QDateTime>

#include <algorithm>

namespace rankdeck {

namespace {

// $1 run directory, $2 attempt. Runs as one task of the step: SLURM_PROCID is the rank.
// The program runs under setsid (its pid is its process group, which signals go to) with its
// stdin a FIFO fed by `tail -f` of <base>.in, so the launcher's control commands survive a
// reconnect or a re-attach: they are a file on the shared file system. A signal from Slurm
// (scancel, --kill-on-bad-exit after another task failed, the time limit) is passed on to the
// program and the wrapper keeps waiting, so that its exit status lands in <base>.exit.
// Once `wait` has reaped the program (and dash's wait reaps any child, bash's SIGCHLD handler
// too), its pid and group id may be reused by anything on the node: a signal then goes out only
// while `mine` finds the pid still started at the recorded time (field 22 of /proc/PID/stat,
// counted after the last ')', as the command name may hold spaces and ')'), the shell twin of
// util/processidentity.h (docs/reliability.md, "RankDeck never signals a process it did not
// start").
const char kWrapper[] = R"SH(#!/bin/sh
# RankDeck task wrapper: one rank of the job's step (see docs/architecture.md, Slurm).
ticks() {
  _s=$(cat -- "/proc/$1/stat" 2>/dev/null) || return 1
  set -- ${_s##*)}
  [ "$#" -ge 20 ] && echo "${20}"
}
# mine PID START: PID is still the process that started at START.
mine() { [ -n "$2" ] && [ "$(ticks "$1")" = "$2" ]; }
d=$1; a=$2
r=${SLURM_PROCID:?rankdeck: rank.sh runs under srun}
f=$d/rank$r.a$a
umask 077
if [ "$r" = 0 ]; then
  addr=$(scontrol show node -o "$SLURMD_NODENAME" 2>/dev/null | tr ' ' '\n' | sed -n 's/^NodeAddr=//p' | head -n 1)
  [ -n "$addr" ] || addr=$(hostname -I 2>/dev/null | cut -d' ' -f1)
  [ -n "$addr" ] || addr=$(hostname)
  echo "$addr" >"$d/master.a$a.$$" && mv -f -- "$d/master.a$a.$$" "$d/master.a$a"
fi
while [ ! -e "$f.spec" ] || [ ! -e "$d/master.a$a" ]; do sleep 0.1; done
wd=; rankdeck_sha256=
. "$f.spec" || { echo "rankdeck: cannot read $f.spec on $SLURMD_NODENAME" >&2; exit 125; }
# After the spec: Slurm's view of the rank and rank 0's own address win over the plan's.
MASTER_ADDR=$(cat -- "$d/master.a$a")
RANK=$SLURM_PROCID; LOCAL_RANK=$SLURM_LOCALID; GROUP_RANK=$SLURM_NODEID; WORLD_SIZE=$SLURM_NTASKS
export RANK LOCAL_RANK GROUP_RANK WORLD_SIZE MASTER_ADDR
case $wd in
  '') wd=$HOME ;;
  /*) ;;
  '~') wd=$HOME ;;
  '~/'*) wd=$HOME/${wd#\~/} ;;
  *) wd=$HOME/$wd ;;
esac
cd -- "$wd" || { echo "rankdeck: cannot enter $wd on $SLURMD_NODENAME" >&2; exit 125; }
command -v setsid >/dev/null 2>&1 || { echo "rankdeck: setsid is missing on $SLURMD_NODENAME" >&2; exit 125; }
case $1 in
  */*) [ -f "$1" ] && [ -x "$1" ] ;;
  *) command -v -- "$1" >/dev/null 2>&1 ;;
esac || { echo "rankdeck: $1 is not an executable file on $SLURMD_NODENAME" >&2; exit 127; }
# The deployed binary by its content, on this node, right before it runs: its name is public.
if [ -n "$rankdeck_sha256" ]; then
  if command -v sha256sum >/dev/null 2>&1; then h=$(sha256sum <"$1")
  elif command -v shasum >/dev/null 2>&1; then h=$(shasum -a 256 <"$1")
  else h=$(openssl dgst -sha256 -r <"$1"); fi
  h=${h%% *}; h=${h##*= }
  [ "$h" = "$rankdeck_sha256" ] || { echo "rankdeck: $1 on $SLURMD_NODENAME is not the binary RankDeck deployed (SHA-256 $h); not running it" >&2; exit 127; }
fi
: >>"$f.in" || exit 125
fifo=$(mktemp -u "${TMPDIR:-/tmp}/rankdeck-in.XXXXXX") && mkfifo -m 600 -- "$fifo" || exit 125
exec 5<>"$fifo"
( exec setsid "$@" <"$fifo" 5<&- ) &
pid=$!
start=$(ticks "$pid")
tail -c +1 -s 0.2 --pid="$pid" -f -- "$f.in" >"$fifo" 2>/dev/null 5<&- &
t=$!
tstart=$(ticks "$t")
exec 5<&-
echo "$pid $SLURMD_NODENAME" >"$f.pid.$$" && mv -f -- "$f.pid.$$" "$f.pid"
( while kill -0 "$pid" 2>/dev/null; do
    for s in "$f".sig.*; do
      [ -e "$s" ] || continue
      n=$(cat -- "$s"); rm -f -- "$s"
      mine "$pid" "$start" || break
      kill -"$n" -- "-$pid" 2>/dev/null || kill -"$n" "$pid" 2>/dev/null
    done
    [ -e "$f.stdin-closed" ] && mine "$t" "$tstart" && kill "$t" 2>/dev/null
    sleep 0.2
  done ) >/dev/null 2>&1 &
w=$!
wstart=$(ticks "$w")
got=
trap 'got=1; mine "$pid" "$start" && kill -TERM -- "-$pid" 2>/dev/null' TERM
trap 'got=1; mine "$pid" "$start" && kill -INT -- "-$pid" 2>/dev/null' INT
while :; do
  got=; wait "$pid"; st=$?
  [ -z "$got" ] && break
  mine "$pid" "$start" || break
done
echo "$st" >"$f.exit.$$" && mv -f -- "$f.exit.$$" "$f.exit"
mine "$t" "$tstart" && kill "$t" 2>/dev/null
mine "$w" "$wstart" && kill "$w" 2>/dev/null
rm -f -- "$fifo"
exit "$st"
)SH";

// $1 run directory, $2 job id, $3 partition, $4 "1": print the pending queue, then triples of
// base name, stdout offset, stderr offset. The exit file is read before the bytes: once it is
// there the program has ended, so the bytes read after it are all there will be.
const char kPoll[] = R"SH(
d=$1; j=$2; p=$3; q=$4; m=$5; shift 5
printf '@job\n'; scontrol -o show job "$j" 2>&1 | head -c 8192 | tr '\n' ' '; printf '\n'
if [ "$q" = 1 ]; then
  printf '@queue '; squeue -h -t PD ${p:+-p "$p"} -o %i -S -p 2>/dev/null | tr '\n' ' '; printf '\n'
fi
# Every rank file's size from one stat, the pid and exit files by the shell's own read: a poll
# (every 300 ms) forks a few processes for the whole job, and two more only for a file with new
# bytes, not six per rank. Base names are rankN.aM: safe unquoted, relative to the run directory.
set -f; files=; k=0
for a in "$@"; do [ $((k % 3)) = 0 ] && files="$files $a.out $a.err"; k=$((k + 1)); done
cd -- "$d" 2>/dev/null || files=
{ [ -n "$files" ] && stat -c '%n %s' -- $files 2>/dev/null; } | {
  IFS= read -r line || line=
  while [ "$#" -ge 3 ]; do
    f=$1; pid=; ex=
    [ -n "$files" ] && [ -r "$f.pid" ] && read -r pid <"$f.pid"
    [ -n "$files" ] && [ -r "$f.exit" ] && read -r ex <"$f.exit"
    printf '@rank %s %s|%s\n' "$1" "$pid" "$ex"
    for x in out:$2 err:$3; do
      s=${x%%:*}; o=${x#*:}; z=0
      # stat printed the files that exist, in the order asked: this one is next or missing.
      if [ -n "$line" ] && [ "${line% *}" = "$f.$s" ]; then
        z=${line##* }; IFS= read -r line || line=
      fi
      n=$((z - o)); [ "$n" -gt "$m" ] && n=$m; [ "$n" -lt 0 ] && n=0
      printf '@data %s %s %s\n' "$1" "$s" "$n"
      [ "$n" -gt 0 ] && tail -c +$((o + 1)) -- "$f.$s" | head -c "$n"
    done
    shift 3
  done
  printf '@end\n'
}
)SH";

QByteArray sbatchLine(const QString &option, const QString &value = QString())
{
    QString line = QStringLiteral("#SBATCH ") + option;
    if (!value.isEmpty())
        line += QLatin1Char('=') + value;
    return line.toUtf8() + '\n';
}

} // namespace

QString SlurmScript::baseName(int rank, int attempt)
{
    return QStringLiteral("rank%1.a%2").arg(rank).arg(attempt);
}

QByteArray SlurmScript::batchScript(const Job &job)
{
    const SlurmSettings &s = job.settings;
    const int tasks = s.nodes * s.nprocPerNode;
    const QString a = QString::number(job.attempt);
    QByteArray out = "#!/bin/sh\n";
    out += "# Generated by RankDeck for run " + job.runId.toUtf8() + ", attempt " + a.toUtf8() +
           ", " + QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toUtf8() + ".\n";
    out += "# Submitted with: sbatch --parsable <this file>\n";
    out += sbatchLine(QStringLiteral("--job-name"), QStringLiteral("rankdeck-") + job.runId);
    out += sbatchLine(QStringLiteral("--nodes"), QString::number(s.nodes));
    out += sbatchLine(QStringLiteral("--ntasks-per-node"), QString::number(s.nprocPerNode));
    if (!s.partition.isEmpty())
        out += sbatchLine(QStringLiteral("--partition"), s.partition);
    if (!s.account.isEmpty())
        out += sbatchLine(QStringLiteral("--account"), s.account);
    if (!s.qos.isEmpty())
        out += sbatchLine(QStringLiteral("--qos"), s.qos);
    if (!s.timeLimit.isEmpty())
        out += sbatchLine(QStringLiteral("--time"), s.timeLimit);
    if (s.gpusPerNode > 0)
        out += sbatchLine(QStringLiteral("--gpus-per-node"), QString::number(s.gpusPerNode));
    if (s.cpusPerTask > 0)
        out += sbatchLine(QStringLiteral("--cpus-per-task"), QString::number(s.cpusPerTask));
    out += sbatchLine(QStringLiteral("--output"),
                      job.runDirectory + QStringLiteral("/job.a%1.out").arg(a));
    // A requeued job appends to its logs instead of starting them over.
    out += sbatchLine(QStringLiteral("--open-mode"), QStringLiteral("append"));
    for (const QString &arg : s.sbatchArgs)
        out += sbatchLine(arg);
    const QString files = job.runDirectory + QStringLiteral("/rank%t.a") + a;
    // A requeued job (preemption, a node failure) runs this script again; the launcher has
    // reported its ranks lost by then, and the specs on disk carry the old rendezvous port.
    out += "\n# Requeued: the launcher reported these ranks lost; a restart is a new job.\n"
           "if [ \"${SLURM_RESTART_COUNT:-0}\" -gt 0 ]; then\n"
           "  echo \"rankdeck: job requeued (restart $SLURM_RESTART_COUNT): not starting the ranks "
           "again\" >&2\n  exit 1\nfi\n";
    out += "\n# One step, one task per rank; the step ends when one task fails (-K1).\n";
    out += "srun --kill-on-bad-exit=1 --nodes=" + QByteArray::number(s.nodes) +
           " --ntasks=" + QByteArray::number(tasks) +
           " --ntasks-per-node=" + QByteArray::number(s.nprocPerNode) +
           " --distribution=block --open-mode=append \\\n"
           "  --output=" +
           shell::quote(files + QStringLiteral(".out")) +
           " --error=" + shell::quote(files + QStringLiteral(".err")) + " \\\n  /bin/sh " +
           shell::quote(job.runDirectory + QStringLiteral("/rank.sh")) + ' ' +
           shell::quote(job.runDirectory) + ' ' + a.toUtf8() + '\n';
    out += "exit $?\n";
    return out;
}

QByteArray SlurmScript::rankWrapper()
{
    return QByteArray(kWrapper);
}

QByteArray SlurmScript::rankSpec(const RankLaunchSpec &spec, const QString &libraryDirectory,
                                 const QString &sha256)
{
    QByteArray out = "# rank " + QByteArray::number(spec.rank) + " (sourced by rank.sh)\n";
    out += "wd=" + shell::quote(spec.workingDirectory) + '\n';
    if (!sha256.isEmpty())
        out += "rankdeck_sha256=" + shell::quote(sha256) + '\n';
    QStringList names = spec.environment.keys();
    names.sort();
    for (const QString &name : std::as_const(names)) {
        // Names are checked before; a bad one would be a syntax error in the whole spec.
        if (!shell::isValidVariableName(name))
            continue;
        out += "export " + name.toUtf8() + '=' + shell::quote(spec.environment.value(name)) + '\n';
    }
    if (!libraryDirectory.isEmpty())
        out += "LD_LIBRARY_PATH=" + shell::quote(libraryDirectory) +
               "${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; export LD_LIBRARY_PATH\n";
    out += "set -- " + shell::quote(spec.program);
    bool runDir = false, programWords = false;
    for (const QString &a : spec.arguments) {
        // The launcher's --run-dir in the home directory ("~/…"), absolute on the node: the rank
        // starts in its working directory. Not after "--": those are the user's program's words.
        if (runDir && !programWords && !a.startsWith(QLatin1Char('/')))
            out += " \"$HOME\"/" + shell::quote(a.startsWith(QLatin1String("~/")) ? a.mid(2) : a);
        else
            out += ' ' + shell::quote(a);
        runDir = a == QLatin1String("--run-dir");
        programWords = programWords || a == QLatin1String("--");
    }
    return out + '\n';
}

QByteArray SlurmScript::pollCommand(const QString &runDirectory, const QString &jobId,
                                    const QString &partition, bool withQueue,
                                    const QList<PollRank> &ranks, qint64 maxBytes)
{
    QByteArray cmd = "/bin/sh -c " + shell::quote(QByteArray(kPoll)) + " rankdeck-poll " +
                     shell::quote(runDirectory) + ' ' + shell::quote(jobId) + ' ' +
                     shell::quote(partition) + (withQueue ? " 1 " : " 0 ") +
                     QByteArray::number(maxBytes);
    for (const PollRank &r : ranks)
        cmd += ' ' + shell::quote(r.baseName) + ' ' + QByteArray::number(r.stdoutOffset) + ' ' +
               QByteArray::number(r.stderrOffset);
    return cmd;
}

bool SlurmScript::parsePoll(const QByteArray &output, PollReply *reply, QString *error)
{
    *reply = PollReply();
    qsizetype pos = 0;
    auto nextLine = [&](QByteArray *line) {
        const qsizetype nl = output.indexOf('\n', pos);
        if (nl < 0)
            return false;
        *line = output.mid(pos, nl - pos);
        pos = nl + 1;
        return true;
    };
    QByteArray line;
    int streamsRead = 0; // of the last rank: 1 stdout, 2 stderr
    while (nextLine(&line)) {
        if (line == "@end")
            return true;
        if (line == "@job") {
            if (!nextLine(&reply->jobLine))
                break;
            reply->jobLine = reply->jobLine.trimmed();
        } else if (line.startsWith("@queue")) {
            for (const QByteArray &id : line.mid(6).simplified().split(' '))
                if (!id.isEmpty())
                    reply->pendingQueue << QString::fromLatin1(id);
        } else if (line.startsWith("@rank ")) {
            const QList<QByteArray> w = line.mid(6).split(' ');
            PollReply::Rank r;
            // Ours are rank<R>.a<A>: printable ASCII, so the @data lines can name them back.
            const QByteArray name = w.value(0);
            const bool printable =
                std::all_of(name.begin(), name.end(), [](char c) { return c > ' ' && c < 0x7f; });
            r.baseName = QString::fromLatin1(name);
            const QByteArray rest = line.mid(6 + name.size() + 1);
            const qsizetype bar = rest.indexOf('|');
            if (name.isEmpty() || !printable || bar < 0) {
                *error = QStringLiteral("poll reply: a rank line without its name or its '|'");
                return false;
            }
            const QList<QByteArray> pid = rest.left(bar).simplified().split(' ');
            r.pid = pid.value(0).toLongLong();
            r.node = QString::fromUtf8(pid.value(1));
            const QByteArray exit = rest.mid(bar + 1).trimmed();
            bool ok = false;
            r.status = exit.toInt(&ok);
            r.exited = ok;
            reply->ranks.append(r);
            streamsRead = 0;
        } else if (line.startsWith("@data ")) {
            const QList<QByteArray> w = line.mid(6).split(' ');
            const qint64 n = w.value(2).toLongLong();
            // n > size - pos, not pos + n > size: a count near 2^63 must not overflow.
            if (reply->ranks.isEmpty() || n < 0 || n > output.size() - pos) {
                *error = QStringLiteral("truncated poll reply");
                return false;
            }
            // Each stream once, right after its own rank line: anything else would replace
            // bytes already read, or give them to the wrong rank, and the offsets move on.
            PollReply::Rank &r = reply->ranks.last();
            const int stream = w.value(1) == "out" ? 1 : w.value(1) == "err" ? 2 : 0;
            if (w.size() != 3 || w[0] != r.baseName.toLatin1() || stream == 0 ||
                (streamsRead & stream)) {
                *error = QStringLiteral("poll reply: data that is not its rank's next stream");
                return false;
            }
            streamsRead |= stream;
            (stream == 1 ? r.out : r.err) = output.mid(pos, n);
            pos += n;
        }
    }
    *error = QStringLiteral("the poll command did not finish");
    return false;
}

} // namespace rankdeck
