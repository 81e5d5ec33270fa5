// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/flightrecordercollection.h"

#include "diagnosis/flightrecorderdump.h"
#include "util/atomicfile.h"
#include "util/printabletext.h"
#include "util/translation.h"

#include "wire/wireprotocol.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>

#include <algorithm>

namespace rankdeck {

namespace {

QString key(std::string_view k)
{
    return QString::fromLatin1(k.data(), qsizetype(k.size()));
}

// "json: 2048 of 4096 bytes"
QString filledText(const QString &name, const FlightRecorderCollection::File &f)
{
    return tr("%1: %2 of %3 bytes").arg(name).arg(f.filled).arg(f.bytes.size());
}

} // namespace

QString FlightRecorderCollection::triggerName(Trigger trigger)
{
    switch (trigger) {
    case Trigger::Probe:
        return QStringLiteral("probe");
    case Trigger::Hang:
        return QStringLiteral("hang");
    case Trigger::Stacks:
        return QStringLiteral("stacks");
    case Trigger::RankFailed:
        break;
    }
    return QStringLiteral("rank-failed");
}

FlightRecorderCollection::FlightRecorderCollection(qint64 id, Trigger trigger, qint64 startedUs,
                                                   int worldSize, const QList<int> &asked)
    : m_id(id), m_trigger(trigger), m_startedUs(startedUs)
{
    m_answers.resize(std::max(worldSize, 0));
    for (int r = 0; r < m_answers.size(); ++r) {
        m_answers[r].rank = r;
        m_answers[r].asked = asked.contains(r);
        m_answers[r].done = !m_answers[r].asked;
        if (!m_answers[r].asked)
            m_answers[r].reason = tr("not asked: it was not running");
    }
}

FlightRecorderCollection::Answer *FlightRecorderCollection::find(int rank)
{
    return rank >= 0 && rank < m_answers.size() ? &m_answers[rank] : nullptr;
}

const FlightRecorderCollection::Answer *FlightRecorderCollection::answer(int rank) const
{
    return rank >= 0 && rank < m_answers.size() ? &m_answers[rank] : nullptr;
}

bool FlightRecorderCollection::add(int rank, const QJsonObject &e, qint64 nowUs, QString *problem)
{
    Answer *a = find(rank);
    auto broken = [&](const QString &why) {
        *problem = why;
        if (a && !a->done) {
            // The rest of this rank's answer cannot be trusted: its dump is given up.
            a->done = true;
            a->answeredUs = nowUs;
            a->json = File();
            a->pickle = File();
            a->reason = tr("its dump broke the protocol: %1").arg(why);
        }
        return false;
    };
    if (!a)
        return broken(tr("an frdump event of rank %1, which the run does not have").arg(rank));
    if (!a->asked)
        return broken(tr("an frdump event of rank %1, which was not asked").arg(rank));
    if (a->done)
        return broken(tr("an frdump event after the end of rank %1's answer").arg(rank));
    if (e.value(key(wire::field::End)).toBool()) {
        a->done = true;
        a->answeredUs = nowUs;
        const QString msg = printableLabel(e.value(key(wire::field::Message)).toString(), 1000);
        if (!msg.isEmpty())
            a->reason = msg;
        else if (a->json.bytes.isEmpty())
            a->reason = tr("its answer held no dump and no reason");
        else if (!a->json.whole())
            a->reason = tr("its dump arrived incomplete (%1)")
                            .arg(filledText(QStringLiteral("json"), a->json));
        if (!a->pickle.bytes.isEmpty() && !a->pickle.whole()) {
            // torch's analyser cannot read a cut pickle: none is kept, the JSON may still be.
            if (a->reason.isEmpty() && !a->json.whole())
                a->reason = tr("its dump arrived incomplete (%1)")
                                .arg(filledText(QStringLiteral("pickle"), a->pickle));
            a->pickle = File();
        }
        if (!a->json.bytes.isEmpty() && !a->json.whole())
            a->json = File();
        return true;
    }
    const QString file = e.value(key(wire::field::File)).toString();
    const qint64 offset = e.value(key(wire::field::Offset)).toInteger(-1);
    const qint64 size = e.value(key(wire::field::Size)).toInteger(-1);
    const QJsonValue dataValue = e.value(key(wire::field::Data));
    if (file != key(wire::kFlightRecorderJson) && file != key(wire::kFlightRecorderPickle))
        return broken(tr("a chunk of an unknown file \"%1\"").arg(printableLabel(file, 40)));
    if (size <= 0 || size > frlimits::MaxBytes)
        return broken(tr("a %1 file of %2 bytes (at most %3 are taken)")
                          .arg(file)
                          .arg(size)
                          .arg(frlimits::MaxBytes));
    if (!dataValue.isString() ||
        dataValue.toString().size() > qsizetype(wire::kFlightRecorderChunkBytes) * 4 / 3 + 4)
        return broken(tr("a %1 chunk without data, or with more than %2 bytes")
                          .arg(file)
                          .arg(wire::kFlightRecorderChunkBytes));
    const auto decoded = QByteArray::fromBase64Encoding(dataValue.toString().toLatin1(),
                                                        QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded || decoded.decoded.isEmpty())
        return broken(tr("a %1 chunk whose data is not base64").arg(file));
    const QByteArray &data = decoded.decoded;
    if (offset < 0 || offset + data.size() > size)
        return broken(tr("a %1 chunk at offset %2 of %3 bytes outside a file of %4 bytes")
                          .arg(file)
                          .arg(offset)
                          .arg(data.size())
                          .arg(size));
    File &f = file == key(wire::kFlightRecorderJson) ? a->json : a->pickle;
    if (f.bytes.isEmpty())
        f.bytes = QByteArray(size, '\0');
    else if (f.bytes.size() != size)
        return broken(tr("the %1 file changed its size from %2 to %3")
                          .arg(file)
                          .arg(f.bytes.size())
                          .arg(size));
    // Chunks never overlap: the next one below and the one at or above must stay clear.
    auto next = f.chunks.lowerBound(offset);
    if (next != f.chunks.end() && next.key() < offset + data.size())
        return broken(tr("%1 chunks overlap at offset %2").arg(file).arg(offset));
    if (next != f.chunks.begin() && std::prev(next).key() + std::prev(next).value() > offset)
        return broken(tr("%1 chunks overlap at offset %2").arg(file).arg(offset));
    f.chunks.insert(offset, data.size());
    f.bytes.replace(offset, data.size(), data);
    f.filled += data.size();
    return true;
}

void FlightRecorderCollection::giveUp(int rank, const QString &reason, qint64 nowUs)
{
    Answer *a = find(rank);
    if (!a || a->done)
        return;
    a->done = true;
    a->answeredUs = nowUs;
    a->reason = reason;
    a->json = File();
    a->pickle = File();
}

void FlightRecorderCollection::setNotAsked(int rank, const QString &reason)
{
    if (Answer *a = find(rank); a && !a->asked)
        a->reason = reason;
}

qint64 FlightRecorderCollection::endedUs() const
{
    qint64 last = 0;
    for (const Answer &a : m_answers)
        last = std::max(last, a.answeredUs);
    return last;
}

QList<int> FlightRecorderCollection::pending() const
{
    QList<int> out;
    for (const Answer &a : m_answers)
        if (!a.done)
            out << a.rank;
    return out;
}

QList<int> FlightRecorderCollection::ranksWithJson() const
{
    QList<int> out;
    for (const Answer &a : m_answers)
        if (a.hasJson())
            out << a.rank;
    return out;
}

QString FlightRecorderCollection::folder(const QString &runDirectory, qint64 id)
{
    return runDirectory + QStringLiteral("/flight-recorder/%1").arg(id);
}

QString FlightRecorderCollection::torchFolder(const QString &runDirectory, qint64 id)
{
    return folder(runDirectory, id) + QStringLiteral("/torch");
}

QString FlightRecorderCollection::jsonPath(const QString &runDirectory, qint64 id, int rank)
{
    return folder(runDirectory, id) + QStringLiteral("/json/%1.json").arg(rank);
}

QList<qint64> FlightRecorderCollection::ids(const QString &runDirectory)
{
    QList<qint64> out;
    const QDir dir(runDirectory + QStringLiteral("/flight-recorder"));
    for (const QString &name : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        bool ok = false;
        const qint64 id = name.toLongLong(&ok);
        if (ok && id > 0 && QString::number(id) == name)
            out << id;
    }
    std::sort(out.begin(), out.end());
    return out;
}

QJsonObject FlightRecorderCollection::toJson(const QJsonObject &verdict) const
{
    QJsonArray ranks;
    for (const Answer &a : m_answers) {
        QJsonObject o{{QStringLiteral("rank"), a.rank},
                      {QStringLiteral("asked"), a.asked},
                      {QStringLiteral("dump"), a.hasJson()},
                      {QStringLiteral("torch_pickle"), a.pickle.whole()}};
        if (a.hasJson())
            o[QStringLiteral("json_bytes")] = qint64(a.json.bytes.size());
        if (a.pickle.whole())
            o[QStringLiteral("pickle_bytes")] = qint64(a.pickle.bytes.size());
        if (!a.reason.isEmpty())
            o[QStringLiteral("reason")] = a.reason;
        if (a.answeredUs > 0)
            o[QStringLiteral("answered_us")] = a.answeredUs;
        ranks.append(o);
    }
    QJsonObject o{{QStringLiteral("id"), m_id},
                  {QStringLiteral("trigger"), triggerName(m_trigger)},
                  {QStringLiteral("started_us"), m_startedUs},
                  {QStringLiteral("ended_us"), endedUs()},
                  {QStringLiteral("ranks"), ranks}};
    if (!verdict.isEmpty())
        o[QStringLiteral("verdict")] = verdict;
    return o;
}

bool FlightRecorderCollection::write(const QString &runDirectory, const QJsonObject &verdict,
                                     QString *error) const
{
    const QString base = folder(runDirectory, m_id);
    if (!QDir().mkpath(base + QStringLiteral("/torch")) ||
        !QDir().mkpath(base + QStringLiteral("/json"))) {
        *error = tr("cannot create %1").arg(base);
        return false;
    }
    bool ok = true;
    QString why;
    for (const Answer &a : m_answers) {
        if (a.pickle.whole() &&
            !AtomicFile::writeFile(base + QStringLiteral("/torch/rank_%1").arg(a.rank),
                                   a.pickle.bytes, &why))
            ok = false;
        if (a.hasJson() &&
            !AtomicFile::writeFile(jsonPath(runDirectory, m_id, a.rank), a.json.bytes, &why))
            ok = false;
    }
    if (!AtomicFile::writeFile(base + QStringLiteral("/collection.json"),
                               QJsonDocument(toJson(verdict)).toJson(), &why))
        ok = false;
    if (!ok)
        *error = tr("flight-recorder collection %1: %2").arg(m_id).arg(why);
    return ok;
}

} // namespace rankdeck
