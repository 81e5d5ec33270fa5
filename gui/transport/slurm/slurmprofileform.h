// SPDX-License-Identifier: GPL-3.0-or-later
//
// The [slurm] part of a cluster profile in the profile editor: the login node (empty: sbatch on
// this machine), what the job asks for (partition, account, qos, time, nodes, ranks, GPUs, CPUs,
// extra sbatch options) and the shared directory. Shown instead of the node table when the
// profile's transport is "slurm"; validation stays core's (SlurmSettings::validate()).
#pragma once

#include "transport/profilekindform.h"
#include "transport/slurm/slurmsettings.h"

#include <QStringList>

class QLineEdit;
class QSpinBox;

namespace rankdeck {

class SlurmProfileForm : public ProfileKindForm
{
    Q_OBJECT
public:
    explicit SlurmProfileForm(QWidget *parent = nullptr);

    void setSettings(const SlurmSettings &settings);
    SlurmSettings settings() const;
    void setProfile(const Profile &profile) override;
    void applyTo(Profile *profile) const override;
    // What the form itself cannot turn into settings ("slurm.login: … is not a port").
    QStringList problems() const override;

private:
    QLineEdit *m_login = nullptr;
    QLineEdit *m_user = nullptr;
    QLineEdit *m_identity = nullptr;
    QLineEdit *m_partition = nullptr;
    QLineEdit *m_account = nullptr;
    QLineEdit *m_qos = nullptr;
    QLineEdit *m_time = nullptr;
    QSpinBox *m_nodes = nullptr;
    QSpinBox *m_nproc = nullptr;
    QSpinBox *m_gpus = nullptr;
    QSpinBox *m_cpus = nullptr;
    QLineEdit *m_sbatchArgs = nullptr;
    QLineEdit *m_sharedDir = nullptr;
};

} // namespace rankdeck
