// SPDX-License-Identifier: GPL-3.0-or-later
#include "record/profilerecorder.h"

#include "util/atomicfile.h"
#include "util/translation.h"
#include "wire/wireprotocol.h"

#include <QDateTime>
#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>

namespace rankdeck {

ProfileRecorder::ProfileRecorder(QObject *parent) : QObject(parent)
{
    m_timer.setInterval(500);
    connect(&m_timer, &QTimer::timeout, this, &ProfileRecorder::tick);
}

void ProfileRecorder::setRun(Send send, Living living, const QString &profilesDirectory)
{
    m_send = std::move(send);
    m_living = std::move(living);
    m_profilesDirectory = profilesDirectory;
}

bool ProfileRecorder::start(int seconds, const QList<int> &ranks, QString *error)
{
    if (m_busy) {
        *error = tr("a profile is being recorded already");
        return false;
    }
    if (!m_send || !m_living) {
        *error = tr("the run has no ranks to profile");
        return false;
    }
    seconds = std::clamp(seconds, 1, wire::kMaxProfileSeconds);
    const QList<int> living = m_living();
    QList<int> asked;
    for (int r : living)
        if (ranks.isEmpty() || ranks.contains(r))
            asked << r;
    if (asked.isEmpty()) {
        *error = ranks.isEmpty() ? tr("no rank is running") : tr("none of those ranks is running");
        return false;
    }
    const QDateTime now = QDateTime::currentDateTime();
    m_id = now.toMSecsSinceEpoch();
    m_startedAt = now.toString(QStringLiteral("yyyyMMdd-HHmmss"));
    m_directory = m_profilesDirectory + QLatin1Char('/') + m_startedAt;
    if (QDir(m_directory).exists())
        m_directory += QStringLiteral("-%1").arg(m_id % 1000);
    if (!QDir().mkpath(m_directory)) {
        *error = tr("cannot create %1").arg(m_directory);
        return false;
    }
    m_seconds = seconds;
    m_answers.clear();
    const QByteArray line =
        QByteArray(wire::command::Profile.data(), qsizetype(wire::command::Profile.size())) + ' ' +
        QByteArray::number(m_id) + ' ' + QByteArray::number(seconds) + '\n';
    for (int r : asked) {
        m_answers.insert(r, {});
        m_send(r, line);
    }
    m_busy = true;
    m_since.start();
    m_timer.start();
    return true;
}

void ProfileRecorder::handleEvent(int rank, const WorkerEvent &e)
{
    if (!m_busy || e.integer(wire::field::Id, -1) != m_id || !m_answers.contains(rank))
        return;
    Answer &a = m_answers[rank];
    if (a.ended)
        return;
    if (e.has(wire::field::End)) {
        a.ended = true;
        a.samples = std::max<qint64>(0, e.integer(wire::field::SampleCount));
        a.why = e.message().left(500);
    } else if (e.integer(wire::field::Offset, -1) == a.text.size()) {
        const QByteArray data = e.string(wire::field::Data).toUtf8();
        if (a.text.size() + data.size() <= kMaxBytesPerRank)
            a.text += data;
        else
            a.truncated = true;
    }
    if (std::all_of(m_answers.cbegin(), m_answers.cend(), [](const Answer &x) { return x.ended; }))
        complete();
}

void ProfileRecorder::tick()
{
    if (!m_busy)
        return;
    const QList<int> living = m_living ? m_living() : QList<int>();
    for (auto it = m_answers.begin(); it != m_answers.end(); ++it)
        if (!it->ended && !living.contains(it.key())) {
            it->ended = true;
            it->why = tr("the rank ended before it answered");
        }
    const bool late = m_since.elapsed() > qint64(m_seconds) * 1000 + kAnswerMarginMs;
    if (late)
        for (Answer &a : m_answers)
            if (!a.ended) {
                a.ended = true;
                a.why = tr("no answer within %1 s of the profile's end (not a supervised "
                           "program, or an older rankdeck-supervisor)")
                            .arg(kAnswerMarginMs / 1000);
            }
    if (std::all_of(m_answers.cbegin(), m_answers.cend(), [](const Answer &x) { return x.ended; }))
        complete();
}

void ProfileRecorder::complete()
{
    m_busy = false;
    m_timer.stop();
    QJsonObject ranks;
    int withSamples = 0;
    QStringList problems;
    QList<int> order = m_answers.keys();
    std::sort(order.begin(), order.end());
    for (int r : std::as_const(order)) {
        const Answer &a = m_answers[r];
        QJsonObject o{{QStringLiteral("samples"), a.samples}};
        if (!a.why.isEmpty())
            o.insert(QStringLiteral("message"), a.why);
        if (a.truncated)
            o.insert(QStringLiteral("truncated"), true);
        ranks.insert(QString::number(r), o);
        if (a.samples > 0 || !a.text.isEmpty()) {
            QString why;
            const QString path = m_directory + QStringLiteral("/rank-%1.collapsed").arg(r);
            if (AtomicFile::writeFile(path, a.text, &why))
                ++withSamples;
            else
                problems << why;
        } else if (!a.why.isEmpty()) {
            problems << tr("rank %1: %2").arg(r).arg(a.why);
        }
    }
    const QJsonObject meta{{QStringLiteral("seconds"), m_seconds},
                           {QStringLiteral("started"), m_startedAt},
                           {QStringLiteral("ranks"), ranks}};
    QString why;
    if (!AtomicFile::writeFile(m_directory + QStringLiteral("/profile.json"),
                               QJsonDocument(meta).toJson(), &why))
        problems << why;
    QString summary = tr("profile of %1 s: %2 of %3 ranks sampled, in %4")
                          .arg(m_seconds)
                          .arg(withSamples)
                          .arg(m_answers.size())
                          .arg(m_directory);
    if (!problems.isEmpty())
        summary += QStringLiteral(" (") + problems.mid(0, 3).join(QStringLiteral("; ")) +
                   QStringLiteral(")");
    emit message(summary);
    emit finished(m_directory, summary);
}

} // namespace rankdeck
