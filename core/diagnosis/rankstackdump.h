// SPDX-License-Identifier: GPL-3.0-or-later
//
// One stack dump of a rank as the launcher keeps it (a stacks-rank-<R>.txt entry, the GUI's
// stack page, `rankdeck-cli stacks`): the native threads in the worker's format
// (parseThreadStacks), then, for a user's Python program, the faulthandler dump of every Python
// thread under its own marker line. The native part stays parseable by every reader that
// predates Python stacks; the Python part is kept verbatim, as Python printed it.
#pragma once

#include <QString>
#include <QStringList>

namespace rankdeck {

struct PythonThreadStack;

struct RankStackDump
{
    QString native; // "thread N (name):" blocks of frames
    QString python; // faulthandler's dump of every thread, verbatim; empty for native programs

    static RankStackDump split(const QString &body);
    QString joined() const;
    bool isEmpty() const { return native.isEmpty() && python.isEmpty(); }
};

// Where the rank waits, one line per thread worth showing: the native main thread and any
// thread blocked in a collective; then each Python thread's innermost frame in the user's own
// code (else its innermost frame), e.g. "python thread 0x7f… (current): time.sleep? at
// train.py:42 in fail".
QStringList whereRankWaits(const RankStackDump &dump);

// Where a rank is, for the collective verdict: `where` is its main Python thread's innermost
// frame in the user's own code ("train.py:22 in main"; for a native program, the main
// thread's first frame of its own code), `nativeFrame` the native main thread's wait
// ("gloo::transport::tcp::UnboundBuffer::waitRecv", "clock_nanosleep"). Either may be empty.
// `p2pCall` is the point-to-point call the main Python thread is blocked in ("recv", "send",
// "irecv", "batch_isend_irecv", … as torch.distributed names them; "wait" for a request's wait()
// on a native send or receive), and `callFile`/`callLine` the user's frame that made it (a full
// path, to read the code line where it is here): Gloo records no send or recv, so for a
// point-to-point hang the stacks are all there is.
struct RankPlace
{
    QString where;
    QString nativeFrame;
    QString p2pCall;
    QString callFile;
    int callLine = 0;
};
RankPlace rankPlace(const RankStackDump &dump);

// A Python thread of RankDeck's own or one idle in a library: the startup hook's
// `rankdeck-flight-recorder` thread, or a thread started by `threading` that has no frame in
// the user's code (a pool worker waiting for work). Stack summaries skip them.
bool isHelperPythonThread(const PythonThreadStack &thread);

} // namespace rankdeck
