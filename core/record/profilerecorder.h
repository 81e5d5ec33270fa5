// SPDX-License-Identifier: GPL-3.0-or-later
//
// "Profile 10 s" and `rankdeck-cli profile`: every rank records its sampled stacks for that
// long (the supervisor's `profile <id> <seconds>`), then sends them as collapsed stacks
// (`profile` events). The recorder keeps each rank's answer and, once every rank asked has
// answered (or ended, or the time is up by a margin), writes profiles/<id>/rank-<R>.collapsed
// (the format flamegraph.pl and speedscope read, one file per rank) and profile.json (what was
// asked, each rank's sample count or why it has none), the last file written: its presence
// says the profile is complete.
#pragma once

#include "stream/workerevent.h"

#include <QElapsedTimer>
#include <QHash>
#include <QList>
#include <QObject>
#include <QString>
#include <QTimer>

#include <functional>

namespace rankdeck {

class ProfileRecorder : public QObject
{
    Q_OBJECT
public:
    static constexpr qint64 kMaxBytesPerRank = qint64(16) * 1024 * 1024;
    // After the profile's seconds, how long the ranks' answers may take.
    static constexpr int kAnswerMarginMs = 15000;

    using Send = std::function<void(int rank, const QByteArray &line)>;
    using Living = std::function<QList<int>()>;

    explicit ProfileRecorder(QObject *parent = nullptr);
    void setRun(Send send, Living living, const QString &profilesDirectory);

    // Asks the ranks (every living one when `ranks` is empty); false and *error when a profile
    // is being recorded or no rank asked lives.
    bool start(int seconds, const QList<int> &ranks, QString *error);
    bool busy() const { return m_busy; }
    void handleEvent(int rank, const WorkerEvent &event);

signals:
    // The profile's folder, complete; `summary` says what it holds in a line.
    void finished(const QString &directory, const QString &summary);
    void message(const QString &text);

private:
    struct Answer
    {
        QByteArray text;
        qint64 samples = 0;
        QString why;
        bool ended = false;
        bool truncated = false;
    };
    void tick();
    void complete();

    Send m_send;
    Living m_living;
    QString m_profilesDirectory;
    bool m_busy = false;
    qint64 m_id = 0;
    int m_seconds = 0;
    QString m_directory;
    QString m_startedAt;
    QHash<int, Answer> m_answers; // the ranks asked
    QElapsedTimer m_since;
    QTimer m_timer;
};

} // namespace rankdeck
