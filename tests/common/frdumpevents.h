// SPDX-License-Identifier: GPL-3.0-or-later
//
// The `frdump` events of one rank (docs/protocol.md), put back together as a launcher would:
// per collection id the chunks of each file written at their offsets, the end event, and what
// broke the protocol (a chunk after the end, a second end, offsets or sizes that do not fit,
// a line longer than PIPE_BUF). Shared by the supervisor's and the worker's tests.
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QMap>
#include <QString>
#include <QStringList>

namespace rankdeck::testing {

class FrDumpEvents
{
public:
    struct Answer
    {
        QMap<QString, QByteArray> files; // "json" / "pickle" → bytes
        QMap<QString, qint64> filled;    // bytes received per file
        int chunks = 0;
        bool ended = false;
        QString message; // the end event's msg
    };

    // One event line (its JSON object) and the length of the line it came in.
    void add(const QJsonObject &e, qsizetype lineLength)
    {
        if (e.value(QStringLiteral("t")).toString() != QStringLiteral("frdump"))
            return;
        if (lineLength >= 4096)
            m_errors << QStringLiteral("an frdump line of %1 bytes").arg(lineLength);
        const qint64 id = e.value(QStringLiteral("id")).toInteger(-1);
        Answer &a = m_answers[id];
        if (a.ended)
            m_errors << QStringLiteral("an frdump event for id %1 after its end").arg(id);
        if (e.value(QStringLiteral("end")).toBool()) {
            a.ended = true;
            a.message = e.value(QStringLiteral("msg")).toString();
            return;
        }
        const QString file = e.value(QStringLiteral("file")).toString();
        const qint64 offset = e.value(QStringLiteral("offset")).toInteger(-1);
        const qint64 size = e.value(QStringLiteral("size")).toInteger(-1);
        const QByteArray data =
            QByteArray::fromBase64(e.value(QStringLiteral("data")).toString().toLatin1());
        if ((file != QStringLiteral("json") && file != QStringLiteral("pickle")) || offset < 0 ||
            size < 0 || offset + data.size() > size || data.isEmpty() || data.size() > 2048) {
            m_errors << QStringLiteral("a bad chunk: file %1 offset %2 size %3 data %4")
                            .arg(file)
                            .arg(offset)
                            .arg(size)
                            .arg(data.size());
            return;
        }
        QByteArray &bytes = a.files[file];
        if (bytes.isEmpty())
            bytes = QByteArray(size, '\0');
        if (bytes.size() != size) {
            m_errors << QStringLiteral("file %1 changed size within id %2").arg(file).arg(id);
            return;
        }
        bytes.replace(offset, data.size(), data);
        a.filled[file] += data.size();
        ++a.chunks;
    }

    bool has(qint64 id) const { return m_answers.contains(id); }
    const Answer answer(qint64 id) const { return m_answers.value(id); }
    // Whether every file of `id` arrived whole (each byte once).
    bool complete(qint64 id) const
    {
        const Answer a = m_answers.value(id);
        for (auto it = a.files.begin(); it != a.files.end(); ++it)
            if (a.filled.value(it.key()) != it.value().size())
                return false;
        return a.ended;
    }
    const QStringList &errors() const { return m_errors; }

private:
    QMap<qint64, Answer> m_answers;
    QStringList m_errors;
};

} // namespace rankdeck::testing
