// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/factory/connectioncheck.h"

#include "transport/factory/transportfactory.h"
#include "transport/transport.h"

#include <QDateTime>

namespace rankdeck {

ConnectionCheck::ConnectionCheck(const Profile &profile, SshInteraction *interaction,
                                 QObject *parent)
    : QObject(parent), m_profile(profile), m_interaction(interaction)
{}

ConnectionCheck::~ConnectionCheck() = default;

bool ConnectionCheck::start(const QString &workerPath, QString *error)
{
    // Its own id: a check leaves nothing a run of the profile could mistake for its own.
    m_transport = TransportFactory::create(
        m_profile, QStringLiteral("check-%1").arg(QDateTime::currentSecsSinceEpoch()),
        m_interaction, this, error);
    if (!m_transport)
        return false;
    m_withWorker = !workerPath.isEmpty();
    // One line a place the check talks to: every node of an SSH profile, one login for Slurm.
    QStringList names;
    for (int i = 0; i < m_profile.nodes.size(); ++i) {
        const QString name = m_transport->nodeName(i);
        if (names.contains(name))
            continue;
        names << name;
        m_lines.insert(i, tr("%1: waiting").arg(name));
    }
    connect(m_transport, &Transport::nodeProgress, this,
            [this](int node, const QString &stage, int percent) {
                const QString name = m_transport->nodeName(node);
                m_lines.insert(node, percent >= 0 ? tr("%1: %2 %3%").arg(name, stage).arg(percent)
                                                  : tr("%1: %2").arg(name, stage));
                emit progress(node, name, stage, percent);
                emit linesChanged();
            });
    connect(m_transport, &Transport::prepared, this, [this] { finish(QString()); });
    connect(m_transport, &Transport::prepareFailed, this,
            [this](const QString &why) { finish(why.isEmpty() ? tr("the check failed") : why); });
    m_transport->prepare(workerPath);
    return true;
}

void ConnectionCheck::finish(const QString &error)
{
    if (m_finished)
        return;
    m_finished = true;
    m_error = error;
    for (int i = 0; i < m_profile.nodes.size(); ++i) {
        const QString report = m_transport->nodeReport(i);
        if (!report.isEmpty())
            m_lines.insert(i, tr("%1: %2").arg(m_transport->nodeName(i), report));
    }
    emit linesChanged();
    emit finished(error.isEmpty());
}

QStringList ConnectionCheck::lines() const
{
    QStringList out = nodeLines();
    if (m_finished && !m_error.isEmpty())
        out << tr("FAILED — %1").arg(m_error);
    return out;
}

QString ConnectionCheck::summary() const
{
    if (!succeeded())
        return {};
    const QString found = m_transport->checkSummary();
    return m_withWorker ? tr("%1, worker ready (%2)").arg(found, m_transport->describe()) : found;
}

} // namespace rankdeck
