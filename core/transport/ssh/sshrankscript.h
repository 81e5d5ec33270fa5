// SPDX-License-Identifier: GPL-3.0-or-later
//
// The shell commands the SSH transport runs on a node for one rank. The rank itself never talks
// to the SSH channel directly; a small POSIX sh wrapper sits in between so that nothing is lost
// when the connection drops:
//
//   <run dir>/<base>.out, .err   the rank's complete stdout and stderr (the rank writes here)
//   <base>.in                    a FIFO: the rank's stdin (the control channel)
//   <base>.pid                   "<pid> <start>": the rank's pid, which is also its process
//                                group (setsid), and its start (/proc/PID/stat field 22), so
//                                that a later process with that pid is never signalled
//   <base>.exit                  its wait status once it ended (128+N: killed by signal N)
//   <base>.stdin-closed          the launcher closed stdin on purpose
//   <base>.stdin-log             every byte of stdin the rank was given
//
// The channel's stdout starts with one header line "rankdeck-ssh <pid> <stdin bytes>\n" (the
// bytes of stdin the node received so far: a re-attaching launcher resends the rest), then the
// bytes of <base>.out from the requested offset on (tail -c +N -f), its stderr those of
// <base>.err; its exit status is the rank's. Channel stdin is copied into the FIFO by a keeper
// that holds the FIFO open for `grace` seconds after the channel's stdin ended (-1: until the
// rank ends), so a dropped connection does not look like "end of stdin" to the rank while the
// launcher reconnects; if nobody re-attaches in time the rank sees end of stdin and stops itself
// (the worker's watchdog). attach() re-attaches at byte offsets, so the launcher resumes with
// no gap and no duplicate.
//
// Every variable part is passed as a positional parameter quoted with shell::quote(), never
// pasted into the script, so no field can inject a command.
#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

namespace rankdeck {

class SshRankScript
{
public:
    struct Start
    {
        QString tag;          // shows in the wrapper's command line (pgrep -f finds it): the run id
        QString runDirectory; // absolute
        QString baseName;     // file name prefix inside runDirectory, e.g. "rank3.a1"
        QString workingDirectory; // absolute
        int graceSec = 60;        // -1: keep stdin open until the rank ends (detached runs)
        QList<QPair<QString, QString>> environment; // names already validated
        QString program;
        QStringList arguments;
    };

    // Header the wrapper prints before any output; the launcher strips it.
    static QByteArray headerPrefix() { return QByteArrayLiteral("rankdeck-ssh "); }
    // Exit status when the wrapper could not set the rank up (message on stderr, no header).
    static constexpr int kSetupFailed = 125;
    // Exit status of attach() when the rank's end could not be determined.
    static constexpr int kExitUnknown = 255;

    static QByteArray start(const Start &s);
    static QByteArray attach(const QString &tag, const QString &runDirectory,
                             const QString &baseName, int graceSec, qint64 stdoutOffset,
                             qint64 stderrOffset);
    // The node's side of the lease (see SshLease): echoes each byte the launcher sends; when none
    // arrived for graceSec seconds on a connection that stayed open (a cut link: the node sees no
    // end of it), it ends every rank of the run directory that has not ended (SIGTERM to its
    // group, SIGKILL 5 s later). An end of its stdin (the launcher closed it or died, the
    // connection closed) ends it quietly: the keepers' own grace covers that. graceSec < 0
    // (detached runs): it only echoes.
    static QByteArray lease(const QString &tag, const QString &runDirectory, int graceSec);
    // Marks stdin as closed on purpose, so the keeper does not wait for a re-attach.
    static QByteArray markStdinClosed(const QString &runDirectory, const QString &baseName);
    // Signal to the whole process group of the rank whose pid file is
    // <runDirectory>/<baseName>.pid, only while pgid is still the process that file names (its
    // recorded start time); else it exits 1 with a message and signals nothing. An older pid file
    // without a start time passes if its process started no later than the file was written.
    static QByteArray signalGroup(const QString &runDirectory, const QString &baseName, qint64 pgid,
                                  int signal);
};

} // namespace rankdeck
