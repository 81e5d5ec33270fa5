// SPDX-License-Identifier: GPL-3.0-or-later
//
// TensorBoard's own reader (EventAccumulator, from the torch venv's tensorboard package) over a
// directory of event files, for tests that check what RankDeck wrote without RankDeck's code.
#pragma once

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QString>

namespace rankdeck::testing {

// The torch venv's Python, or empty (then the caller skips, naming RANKDECK_TORCH_PYTHON).
inline QString tensorBoardPython()
{
    return qEnvironmentVariable("RANKDECK_TORCH_PYTHON");
}

// {run: {tag: [[step, wall_time, value], ...]}}; *error says why not when empty.
inline QJsonObject readWithTensorBoard(const QString &directory, QString *error)
{
    QProcess p;
    p.start(tensorBoardPython(), {qEnvironmentVariable("RANKDECK_SOURCE_DIR") +
                                      QStringLiteral("/tests/common/read_tfevents.py"),
                                  directory});
    if (!p.waitForFinished(120000) || p.exitCode() != 0) {
        *error = QStringLiteral("read_tfevents.py failed: ") +
                 QString::fromUtf8(p.readAllStandardError());
        return {};
    }
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(p.readAllStandardOutput(), &parseError);
    if (!doc.isObject())
        *error = QStringLiteral("read_tfevents.py printed no JSON: ") + parseError.errorString();
    return doc.object();
}

} // namespace rankdeck::testing
