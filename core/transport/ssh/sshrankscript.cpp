// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/ssh/sshrankscript.h"

#include "util/shellquote.h"

namespace rankdeck {

namespace {

// Which process a pid file names (the shell twin of util/processidentity.h). A rank's pid file
// holds "PID START", START being field 22 of /proc/PID/stat: the rank's start in clock ticks
// after boot, which a later process given the same pid does not share (pids wrap: pid_max is
// 32,768 on many nodes). `ours FILE [PID]` prints the pid FILE names while that process is still
// the rank: the recorded start time, and it leads its own session and group (setsid), so that
// `kill -- -PID` reaches the rank's group and nobody else's; PID, when given, must be the one
// recorded. A pid file of an older RankDeck holds no START: the process must then have started no
// later than the file was written (the wrapper writes it right after the fork). "0", "1" and
// anything but digits never pass: `kill -- -0` is the caller's own group, `kill -- -1` every
// process it may signal. The command name (field 2) may hold spaces and ')': fields are counted
// after the last ')'. Variables start with _ so that a caller's are left alone.
const char kIdentity[] = R"SH(
ticks() {
  _s=$(cat -- "/proc/$1/stat" 2>/dev/null) || return 1
  set -- ${_s##*)}
  [ "$#" -ge 20 ] && echo "${20}"
}
ours() {
  _f=$1; _p=; _t=
  { read -r _p _t _ <"$_f"; } 2>/dev/null || [ -n "$_p" ] || return 1
  case $_p in ''|0*|1|*[!0-9]*) return 1 ;; esac
  [ -z "$2" ] || [ "$_p" = "$2" ] || return 1
  _s=$(cat -- "/proc/$_p/stat" 2>/dev/null) || return 1
  set -- ${_s##*)}
  [ "$#" -ge 20 ] && [ "$3" = "$_p" ] && [ "$4" = "$_p" ] || return 1
  if [ -n "$_t" ]; then
    [ "$_t" = "${20}" ] || return 1
  else
    _h=$(getconf CLK_TCK 2>/dev/null) || _h=100
    _b=$(sed -n 's/^btime //p' /proc/stat) && _m=$(stat -c %Y -- "$_f") || return 1
    [ $((_b + ${20} / _h)) -le "$_m" ] || return 1
  fi
  echo "$_p"
}
)SH";

// Copies the channel's stdin into the FIFO, then keeps the FIFO open for a re-attach: until the
// launcher closed stdin on purpose, the rank ended, or `grace` seconds passed (-1: no limit),
// counted in fifths so that a short grace is kept to the fifth of a second.
// Its output goes nowhere so that sshd can close the channel as soon as the rank ended. At the
// start the wrapper holds the FIFO open for writing on fd 5 until both the rank and the keeper
// are forked: the rank's open for reading then never waits for a writer (a keeper that ended at
// once, its stdin already closed, left it blocked forever), and it never sees an end of stdin
// before the keeper has its own writer (the keeper keeps its inherited fd 5 until fd 3 is
// open). What it forwarded is also appended to <base>.stdin-log, whose size tells a re-attaching
// launcher which of its writes arrived before the connection dropped.
const char kKeeper[] = R"SH(
keep() {
  { tee -a "$f.stdin-log" <&4 >&3
    i=0
    while [ ! -e "$f.stdin-closed" ] && kill -0 "$pid" 2>/dev/null; do
      if [ "$grace" -ge 0 ] && [ "$i" -ge $((grace * 5)) ]; then break; fi
      sleep 0.2; i=$((i+1))
    done
  } 3<>"$f.in" 5<&- >/dev/null 2>&1 &
}
)SH";

// $1 run dir, $2 base name, $3 working dir, $4 grace, $5 count of NAME=VALUE words, then those
// words, the program and its arguments. Every external command is a fork and exec on a node that
// may be starting tens of ranks at once, so the setup runs only the ones it needs (mkfifo; mkdir
// and rm only when the directory is missing or files of an earlier try are there).
// The shell's own stderr is the channel's, which a detached launcher has closed: when the rank
// dies of a signal, `wait` has the shell print "Terminated" or "Segmentation fault" there, the
// write's SIGPIPE killed the shell before it wrote $f.exit, and a re-attached launcher could
// only say "exit status unknown". So the shell writes nothing once the tails carry the streams.
const char kStart[] = R"SH(
d=$1; b=$2; wd=$3; grace=$4; n=$5; shift 5
f=$d/$b
umask 077
[ -d "$d" ] || mkdir -p -- "$d" || exit 125
cd -- "$wd" || exit 125
command -v setsid >/dev/null 2>&1 || { echo "rankdeck: setsid is missing on $(uname -n)" >&2; exit 125; }
i=0; prog=
for a; do if [ "$i" -eq "$n" ]; then prog=$a; break; fi; i=$((i+1)); done
case $prog in
  */*) [ -f "$prog" ] && [ -x "$prog" ] ;;
  *) command -v -- "$prog" >/dev/null 2>&1 ;;
esac || { echo "rankdeck: $prog is not an executable file on $(uname -n)" >&2; exit 127; }
for x in in exit pid stdin-closed; do
  if [ -e "$f.$x" ] || [ -h "$f.$x" ]; then rm -f -- "$f.in" "$f.exit" "$f.pid" "$f.stdin-closed"; break; fi
done
{ : >"$f.out" && : >"$f.err" && : >"$f.stdin-log" && mkfifo -m 600 -- "$f.in"; } || exit 125
exec 4<&0 5<>"$f.in"
(
  while [ "$n" -gt 0 ]; do export "$1" || exit 125; shift; n=$((n-1)); done
  exec setsid "$@" <"$f.in" >>"$f.out" 2>>"$f.err" 5<&-
) 4<&- &
pid=$!
echo "$pid $(ticks "$pid")" >"$f.pid"
keep
exec 4<&- 5<&-
printf 'rankdeck-ssh %s 0\n' "$pid"
tail -c +1 -s 0.2 --pid="$pid" -f -- "$f.out" &
t1=$!
tail -c +1 -s 0.2 --pid="$pid" -f -- "$f.err" >&2 &
t2=$!
exec 2>/dev/null
wait "$pid"; st=$?
echo "$st" >"$f.exit.tmp" && mv -f -- "$f.exit.tmp" "$f.exit"
wait "$t1"; wait "$t2"
exit "$st"
)SH";

// $1 run dir, $2 base name, $3 grace, $4 stdout bytes already received, $5 stderr bytes.
const char kAttach[] = R"SH(
d=$1; b=$2; grace=$3; o1=$4; o2=$5
f=$d/$b
pid=
{ read -r pid _ <"$f.pid"; } 2>/dev/null
[ -n "$pid" ] || { echo "rankdeck: no rank $b to re-attach to in $d on $(uname -n)" >&2; exit 125; }
exec 4<&0
follow="-f --pid=$pid"
sb=$(wc -c <"$f.stdin-log" 2>/dev/null) || sb=0
if [ -e "$f.exit" ]; then follow=; else keep; fi
exec 4<&-
printf 'rankdeck-ssh %s %s\n' "$pid" "$sb"
tail -c +$((o1+1)) -s 0.2 $follow -- "$f.out" &
t1=$!
tail -c +$((o2+1)) -s 0.2 $follow -- "$f.err" >&2 &
t2=$!
wait "$t1"; wait "$t2"
i=0; while [ ! -e "$f.exit" ] && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i+1)); done
[ -e "$f.exit" ] && exit "$(cat -- "$f.exit")"
exit 255
)SH";

// $1 run dir, $2 grace. `timeout` ends the read of one byte after $2 s (status 124); an empty
// read is the end of stdin. Without `timeout` on the node only the keepers' grace is left.
const char kLease[] = R"SH(
d=$1; g=$2
if [ "$g" -lt 0 ] || ! command -v timeout >/dev/null 2>&1; then exec cat; fi
while x=$(timeout "$g" head -c 1 2>/dev/null); do
  [ -n "$x" ] || exit 0
  printf %s "$x"
done
ranks() {
  for p in "$d"/*.pid; do
    [ -f "$p" ] && [ ! -e "${p%.pid}.exit" ] && g=$(ours "$p") && kill -s "$1" -- "-$g" 2>/dev/null
  done
}
ranks TERM
sleep 5
ranks KILL
exit 0
)SH";

QByteArray shCommand(const QByteArray &script, const QString &tag, const QStringList &args)
{
    QByteArray cmd = "exec /bin/sh -c " + shell::quote(script) + ' ' + shell::quote(tag);
    for (const QString &a : args)
        cmd += ' ' + shell::quote(a);
    return cmd;
}

} // namespace

QByteArray SshRankScript::start(const Start &s)
{
    QStringList args{s.runDirectory, s.baseName, s.workingDirectory, QString::number(s.graceSec),
                     QString::number(s.environment.size())};
    for (const auto &[name, value] : s.environment)
        args << name + QLatin1Char('=') + value;
    args << s.program << s.arguments;
    return shCommand(QByteArray(kIdentity) + kKeeper + kStart, QStringLiteral("rankdeck:") + s.tag,
                     args);
}

QByteArray SshRankScript::attach(const QString &tag, const QString &runDirectory,
                                 const QString &baseName, int graceSec, qint64 stdoutOffset,
                                 qint64 stderrOffset)
{
    return shCommand(QByteArray(kKeeper) + kAttach, QStringLiteral("rankdeck:") + tag,
                     {runDirectory, baseName, QString::number(graceSec),
                      QString::number(stdoutOffset), QString::number(stderrOffset)});
}

QByteArray SshRankScript::lease(const QString &tag, const QString &runDirectory, int graceSec)
{
    return shCommand(QByteArray(kIdentity) + kLease, QStringLiteral("rankdeck:") + tag,
                     {runDirectory, QString::number(graceSec)});
}

QByteArray SshRankScript::markStdinClosed(const QString &runDirectory, const QString &baseName)
{
    return shCommand("touch -- \"$1/$2.stdin-closed\"", QStringLiteral("rankdeck"),
                     {runDirectory, baseName});
}

QByteArray SshRankScript::signalGroup(const QString &runDirectory, const QString &baseName,
                                      qint64 pgid, int signal)
{
    // $1 run dir, $2 base name, $3 the pid the launcher knows, $4 the signal.
    static const char kSignal[] = R"SH(
p=$(ours "$1/$2.pid" "$3") || {
  echo "rankdeck: not signalling pid $3: $1/$2.pid does not name it, or it is no longer the rank started then" >&2
  exit 1
}
kill -s "$4" -- "-$p"
)SH";
    return shCommand(QByteArray(kIdentity) + kSignal, QStringLiteral("rankdeck"),
                     {runDirectory, baseName, QString::number(pgid), QString::number(signal)});
}

} // namespace rankdeck
