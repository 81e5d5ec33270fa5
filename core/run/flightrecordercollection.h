// SPDX-License-Identifier: GPL-3.0-or-later
//
// One flight-recorder collection of a run: the launcher asked the living ranks for their dump
// (`dump-flight-recorder <id>`), and each answers with `frdump` chunks of torch's JSON and
// pickle and one end event (docs/protocol.md). This class keeps the bookkeeping: which ranks
// were asked, the chunks put back at their offsets, and for every rank either its files or the
// reason it gave none (its own end message, "no answer within N s", "it exited before
// answering", a broken chunk). Plain data, no Qt objects: FlightRecorderCollector drives it.
// In the run record a collection is a folder of its own:
//   flight-recorder/<id>/torch/rank_<r>   torch's pickle: fr_trace <that folder> --prefix rank_
//   flight-recorder/<id>/json/<r>.json    torch's JSON, what RankDeck's verdict reads
//   flight-recorder/<id>/collection.json  trigger, times, each rank's answer or reason, verdict
// The JSON files stay out of torch/ and out of names with "rank_": fr_trace reads every file
// under the folder it is given whose name starts with the prefix, subfolders included.
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>

namespace rankdeck {

class FlightRecorderCollection
{
public:
    enum class Trigger
    {
        Probe,      // every rank stopped making progress a short while (an early look)
        Hang,       // the hang watch flagged ranks
        Stacks,     // `rankdeck-cli stacks`, the GUI's "Dump stacks"
        RankFailed, // a rank failed while others live: collected before they are stopped
    };
    static QString triggerName(Trigger trigger); // "probe", "hang", "stacks", "rank-failed"

    // One of torch's files as it arrives: bytes at their offsets, what is filled.
    struct File
    {
        QByteArray bytes;
        QMap<qint64, qint64> chunks; // offset → length
        qint64 filled = 0;
        bool whole() const { return !bytes.isEmpty() && filled == bytes.size(); }
    };

    struct Answer
    {
        int rank = -1;
        bool asked = false; // alive when the collection started, sent the request
        bool done = false;  // its end event came, or it was given up on
        File json;
        File pickle;
        QString reason; // why there is no (whole) dump; empty when the JSON came whole
        qint64 answeredUs = 0;
        bool hasJson() const { return json.whole(); }
    };

    FlightRecorderCollection() = default;
    // `asked`: the living ranks that get the request; the others of worldSize are recorded
    // with `notAskedReason(rank)` (e.g. "it has exited").
    FlightRecorderCollection(qint64 id, Trigger trigger, qint64 startedUs, int worldSize,
                             const QList<int> &asked);

    qint64 id() const { return m_id; }
    Trigger trigger() const { return m_trigger; }
    qint64 startedUs() const { return m_startedUs; }
    qint64 endedUs() const; // the last answer (or giving up)
    const QList<Answer> &answers() const { return m_answers; }
    const Answer *answer(int rank) const;

    // One frdump event of `rank` (its JSON object, the collection id already checked). false
    // and *problem when it breaks the protocol: the rank's dump is then given up with that
    // reason (a bounded parser: sizes over frlimits::MaxBytes, offsets outside the file,
    // chunks that overlap or change the size, events after the end).
    bool add(int rank, const QJsonObject &event, qint64 nowUs, QString *problem);
    // The rank gives no answer (any more): timed out, exited, never asked.
    void giveUp(int rank, const QString &reason, qint64 nowUs);
    void setNotAsked(int rank, const QString &reason);
    QList<int> pending() const;
    bool isComplete() const { return pending().isEmpty(); }
    // Answered with a whole JSON dump.
    QList<int> ranksWithJson() const;

    // The folder as described above (into <runDirectory>/flight-recorder/<id>); collection.json
    // gets `verdict` when given. false and *error on a disk problem (what was written stays).
    bool write(const QString &runDirectory, const QJsonObject &verdict, QString *error) const;
    QJsonObject toJson(const QJsonObject &verdict = {}) const;

    static QString folder(const QString &runDirectory, qint64 id);
    static QString torchFolder(const QString &runDirectory, qint64 id);
    static QString jsonPath(const QString &runDirectory, qint64 id, int rank);
    // The collections a run directory holds, by id, oldest first.
    static QList<qint64> ids(const QString &runDirectory);

private:
    Answer *find(int rank);

    qint64 m_id = 0;
    Trigger m_trigger = Trigger::Probe;
    qint64 m_startedUs = 0;
    QList<Answer> m_answers; // one per rank of the world
};

} // namespace rankdeck
