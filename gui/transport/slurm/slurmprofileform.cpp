// SPDX-License-Identifier: GPL-3.0-or-later
#include "transport/slurm/slurmprofileform.h"

#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QProcess>
#include <QSpinBox>

namespace rankdeck {

namespace {

QSpinBox *countSpin(QWidget *parent, int min, int max, const QString &objectName)
{
    auto *spin = new QSpinBox(parent);
    spin->setRange(min, max);
    spin->setObjectName(objectName);
    return spin;
}

// "host" or "host:port"; port 22 when none is given.
bool splitLogin(const QString &text, QString *host, int *port)
{
    *host = text.trimmed();
    *port = 22;
    const int colon = host->lastIndexOf(QLatin1Char(':'));
    if (colon < 0 || host->count(QLatin1Char(':')) != 1)
        return true;
    bool ok = false;
    *port = host->mid(colon + 1).toInt(&ok);
    *host = host->left(colon);
    return ok;
}

} // namespace

SlurmProfileForm::SlurmProfileForm(QWidget *parent) : ProfileKindForm(tr("Slurm"), parent)
{
    setObjectName(QStringLiteral("slurmProfileForm"));
    auto line = [this](const QString &name, const QString &placeholder) {
        auto *edit = new QLineEdit(this);
        edit->setObjectName(name);
        edit->setPlaceholderText(placeholder);
        connect(edit, &QLineEdit::textChanged, this, &SlurmProfileForm::changed);
        return edit;
    };
    m_login = line(QStringLiteral("slurmLoginEdit"),
                   tr("empty: sbatch on this machine; else HOST[:PORT] or an SSH alias"));
    m_user = line(QStringLiteral("slurmUserEdit"), tr("SSH config / current user"));
    m_identity = line(QStringLiteral("slurmIdentityEdit"), tr("agent and default keys"));
    m_partition = line(QStringLiteral("slurmPartitionEdit"), tr("the cluster's default"));
    m_account = line(QStringLiteral("slurmAccountEdit"), QString());
    m_qos = line(QStringLiteral("slurmQosEdit"), QString());
    m_time = line(QStringLiteral("slurmTimeEdit"), tr("e.g. 2:00:00 (partition default)"));
    m_sbatchArgs = line(QStringLiteral("slurmSbatchArgsEdit"), tr("e.g. --exclusive --mem=0"));
    m_sharedDir = line(QStringLiteral("slurmSharedDirEdit"), QStringLiteral("~/.cache/rankdeck"));
    m_sharedDir->setToolTip(tr("A directory every node sees (the cluster's shared file system): "
                               "the worker, the batch scripts and every rank's output go there"));
    m_nodes = countSpin(this, 1, 100000, QStringLiteral("slurmNodesSpin"));
    m_nproc = countSpin(this, 1, 4096, QStringLiteral("slurmNprocSpin"));
    m_gpus = countSpin(this, 0, 4096, QStringLiteral("slurmGpusSpin"));
    m_cpus = countSpin(this, 0, 100000, QStringLiteral("slurmCpusSpin"));
    m_cpus->setSpecialValueText(tr("default"));
    for (QSpinBox *spin : {m_nodes, m_nproc, m_gpus, m_cpus})
        connect(spin, &QSpinBox::valueChanged, this, &SlurmProfileForm::changed);

    auto *counts = new QHBoxLayout;
    counts->addWidget(m_nodes);
    counts->addWidget(m_nproc);
    counts->addWidget(m_gpus);
    counts->addWidget(m_cpus);
    auto *form = new QFormLayout(this);
    form->addRow(tr("Lo&gin node:"), m_login);
    form->addRow(tr("SSH &user:"), m_user);
    form->addRow(tr("SSH &key file:"), m_identity);
    form->addRow(tr("&Partition:"), m_partition);
    form->addRow(tr("A&ccount:"), m_account);
    form->addRow(tr("&QoS:"), m_qos);
    form->addRow(tr("T&ime limit:"), m_time);
    form->addRow(tr("Nodes, ranks per node, GPUs per node, CPUs per rank:"), counts);
    form->addRow(tr("Extra sb&atch options:"), m_sbatchArgs);
    form->addRow(tr("S&hared directory:"), m_sharedDir);
}

void SlurmProfileForm::setSettings(const SlurmSettings &s)
{
    const QSignalBlocker blocker(this);
    m_login->setText(s.login.isEmpty() || s.port == 22
                         ? s.login
                         : QStringLiteral("%1:%2").arg(s.login).arg(s.port));
    m_user->setText(s.user);
    m_identity->setText(s.identityFile);
    m_partition->setText(s.partition);
    m_account->setText(s.account);
    m_qos->setText(s.qos);
    m_time->setText(s.timeLimit);
    m_nodes->setValue(s.nodes);
    m_nproc->setValue(s.nprocPerNode);
    m_gpus->setValue(s.gpusPerNode);
    m_cpus->setValue(s.cpusPerTask);
    m_sbatchArgs->setText(s.sbatchArgs.join(QLatin1Char(' ')));
    m_sharedDir->setText(s.sharedDir);
}

SlurmSettings SlurmProfileForm::settings() const
{
    SlurmSettings s;
    if (!splitLogin(m_login->text(), &s.login, &s.port))
        s.port = -1; // core names the field
    s.user = m_user->text().trimmed();
    s.identityFile = m_identity->text().trimmed();
    s.partition = m_partition->text().trimmed();
    s.account = m_account->text().trimmed();
    s.qos = m_qos->text().trimmed();
    s.timeLimit = m_time->text().trimmed();
    s.nodes = m_nodes->value();
    s.nprocPerNode = m_nproc->value();
    s.gpusPerNode = m_gpus->value();
    s.cpusPerTask = m_cpus->value();
    s.sbatchArgs = QProcess::splitCommand(m_sbatchArgs->text());
    s.sharedDir = m_sharedDir->text().trimmed();
    return s;
}

void SlurmProfileForm::setProfile(const Profile &profile)
{
    setSettings(SlurmSettings::of(profile));
}

void SlurmProfileForm::applyTo(Profile *profile) const
{
    settings().applyTo(profile);
}

QStringList SlurmProfileForm::problems() const
{
    QString host;
    int port = 0;
    if (!splitLogin(m_login->text(), &host, &port))
        return {tr("slurm.login: \"%1\" is not HOST or HOST:PORT").arg(m_login->text())};
    return {};
}

} // namespace rankdeck
