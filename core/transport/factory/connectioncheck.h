// SPDX-License-Identifier: GPL-3.0-or-later
//
// "Is this profile usable?": connects to its nodes through the transport the profile names (the
// factory's choice, whatever the kind) and checks them; with a worker, deploys it too. The CLI's
// `profiles check` and the GUI's "Test connection" both ask this, so they say the same.
#pragma once

#include "config/profile.h"

#include <QMap>
#include <QObject>
#include <QString>
#include <QStringList>

namespace rankdeck {

class SshInteraction;
class Transport;

class ConnectionCheck : public QObject
{
    Q_OBJECT
public:
    ConnectionCheck(const Profile &profile, SshInteraction *interaction, QObject *parent = nullptr);
    ~ConnectionCheck() override;

    // Starts the check; an empty workerPath only connects and checks (nothing is deployed or
    // submitted). false and *error when the profile's kind is unknown or not built in.
    bool start(const QString &workerPath, QString *error);

    // One line a node, as it stands: "gpu-1: uploading the worker 40%", "gpu-1: OK — …",
    // "gpu-1: FAILED — why".
    QStringList nodeLines() const { return m_lines.values(); }
    // Those, and after a failure a last line that says why the check failed.
    QStringList lines() const;
    bool isFinished() const { return m_finished; }
    bool succeeded() const { return m_finished && m_error.isEmpty(); }
    QString error() const { return m_error; }
    // After success: what was found of the whole and where the worker is ("every node
    // reachable, worker ready (ssh a, b)").
    QString summary() const;

signals:
    void progress(int nodeIndex, const QString &node, const QString &stage, int percent);
    void linesChanged();
    void finished(bool ok);

private:
    void finish(const QString &error);

    Profile m_profile;
    SshInteraction *m_interaction = nullptr;
    Transport *m_transport = nullptr;
    bool m_withWorker = false;
    QMap<int, QString> m_lines; // by node
    bool m_finished = false;
    QString m_error;
};

} // namespace rankdeck
