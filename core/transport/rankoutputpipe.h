// SPDX-License-Identifier: GPL-3.0-or-later
//
// One output stream of a local rank (its stdout or its stderr) as a pipe the launcher reads
// itself. After a read that found less than half a pipe, the pipe is left alone until its owner
// resumes it (LocalTransport does once a batch, every OutputBatchMs), so that a program that
// flushes every line wakes the launcher once a batch, not once a line; a read of half a pipe or
// more is a flood and is followed at once, so a writer never waits on a full pipe. QProcess's own
// channels read whenever the pipe has a byte: at 1,800 lines/s the launcher woke 2,150 times a
// second, and on a machine whose cores the ranks use, the launcher's CPU is the ranks' step time
// (docs/benchmarks.md, "Five goals missed"). The child gets the write end as its fd 1 or 2
// (LocalTransport's child modifier); the parent closes its copy once the child has started.
#pragma once

#include <QByteArray>
#include <QObject>

class QSocketNotifier;

namespace rankdeck {

class RankOutputPipe : public QObject
{
    Q_OBJECT
public:
    explicit RankOutputPipe(QObject *parent = nullptr);
    ~RankOutputPipe() override;

    // false when the system refused a pipe (out of file descriptors): errorString() says why.
    bool isValid() const { return m_read >= 0; }
    QString errorString() const { return m_error; }
    // For the child: the end to put on its fd 1 or 2 (close-on-exec itself, so that only that
    // copy survives the exec).
    int writeEnd() const { return m_write; }
    // In the parent, once the child has its copy: then the pipe ends when the child's copies do.
    void closeWriteEnd();
    // Reads what the pipe holds now and hands it on (output()); never waits for more. Returns
    // how many bytes it read.
    qsizetype drain();
    // Watches the pipe again after a pause (a no-op when it is not paused).
    void resume();
    bool isPaused() const { return m_paused; }

signals:
    void output(const QByteArray &bytes);
    // The pipe stops being watched until resume().
    void paused();

private:
    void onReadable();
    void closeReadEnd();

    int m_read = -1;
    int m_write = -1;
    qsizetype m_capacity = 64 * 1024;
    bool m_paused = false;
    QString m_error;
    QSocketNotifier *m_notifier = nullptr;
};

} // namespace rankdeck
