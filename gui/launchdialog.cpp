// SPDX-License-Identifier: GPL-3.0-or-later
#include "launchdialog.h"

#include "problemlabel.h"

#include "stream/logmetricextractor.h"

#include "config/profilestore.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

namespace rankdeck {

namespace {

// The field a LaunchRequest problem is about, as this form labels it.
QString labelOf(LaunchRequest::Field field)
{
    using Field = LaunchRequest::Field;
    switch (field) {
    case Field::Program:
        return LaunchDialog::tr("program command");
    case Field::Environment:
        return LaunchDialog::tr("program environment");
    case Field::Metric:
        return LaunchDialog::tr("metric patterns");
    case Field::WorkingDirectory:
        return LaunchDialog::tr("program directory");
    case Field::SyncFolder:
        return LaunchDialog::tr("sync folder");
    case Field::SyncLimit:
        return LaunchDialog::tr("sync limit");
    case Field::WorkerArguments:
        return LaunchDialog::tr("extra worker flags");
    case Field::Name:
        return LaunchDialog::tr("run name");
    }
    return {};
}
// Spin boxes whose minimum means "the worker's default" (the flag is left out).
QSpinBox *optionalSpin(QWidget *parent, int max)
{
    auto *spin = new QSpinBox(parent);
    spin->setRange(0, max);
    spin->setSpecialValueText(QCoreApplication::translate("rankdeck::LaunchDialog", "default"));
    return spin;
}
} // namespace

LaunchDialog::LaunchDialog(const ProfileStore *store, QWidget *parent)
    : QDialog(parent), m_store(store)
{
    setWindowTitle(tr("Launch training"));
    setObjectName(QStringLiteral("launchDialog"));

    m_profileCombo = new QComboBox(this);
    m_profileCombo->setObjectName(QStringLiteral("launchProfileCombo"));
    const QStringList names = store ? store->names() : QStringList{Profile::builtinLocalName()};
    m_profileCombo->addItem(Profile::builtinLocalName());
    for (const QString &name : names) {
        if (name != Profile::builtinLocalName())
            m_profileCombo->addItem(name);
    }

    m_task = new QComboBox(this);
    m_task->setObjectName(QStringLiteral("launchTaskCombo"));
    m_task->addItem(tr("linear (tiny regression)"), QStringLiteral("linear"));
    m_task->addItem(tr("mlp (synthetic, sized by width × depth)"), QStringLiteral("mlp"));
    m_task->addItem(tr("charlm (character language model)"), QStringLiteral("charlm"));
    m_task->addItem(tr("script (TorchScript model + data)"), QStringLiteral("script"));
    m_task->addItem(tr("Your program (a torchrun-style script or any binary)"),
                    QStringLiteral("program"));
    m_programCommand = new QLineEdit(this);
    m_programCommand->setObjectName(QStringLiteral("launchProgramEdit"));
    m_programCommand->setPlaceholderText(tr("python3 train.py --epochs 5"));
    m_programDirectory = new QLineEdit(this);
    m_programDirectory->setObjectName(QStringLiteral("launchProgramDirEdit"));
    m_programDirectory->setPlaceholderText(
        tr("default: RankDeck's current directory (local), your home directory (SSH)"));
    m_programEnvironment = new QLineEdit(this);
    m_programEnvironment->setObjectName(QStringLiteral("launchProgramEnvEdit"));
    m_programEnvironment->setPlaceholderText(tr("NAME=VALUE …, e.g. OMP_NUM_THREADS=1"));
    m_programMetrics = new QLineEdit(this);
    m_programMetrics->setObjectName(QStringLiteral("launchProgramMetricsEdit"));
    m_programMetrics->setPlaceholderText(
        tr("NAME=REGEX …, e.g. 'tok_s=([0-9.]+) tok/s' (loss, lr, acc… are found without)"));
    m_programTensorBoard = new QLineEdit(this);
    m_programTensorBoard->setObjectName(QStringLiteral("launchProgramTensorBoardEdit"));
    m_programTensorBoard->setPlaceholderText(
        tr("default: the program's --logdir argument, else runs/ (relative: to its directory)"));
    m_programTensorBoard->setToolTip(
        tr("Where the program's SummaryWriter writes event files: their scalars become curves "
           "per rank while it runs."));

    // Code travels with the run: the folder is uploaded to every node (what changed since the
    // last launch) and the program runs in that copy.
    m_syncRow = new QWidget(this);
    m_programSync = new QCheckBox(tr("Upload to the nodes"), m_syncRow);
    m_programSync->setObjectName(QStringLiteral("launchProgramSyncCheck"));
    m_programSync->setToolTip(
        tr("Copies the folder to every node before the run (only files changed since the last "
           "launch, not .git/ or what .gitignore excludes); the program runs in that copy. Local "
           "profiles run in the folder itself."));
    m_programSyncFolder = new QLineEdit(m_syncRow);
    m_programSyncFolder->setObjectName(QStringLiteral("launchProgramSyncEdit"));
    m_programSyncFolder->setAccessibleName(tr("Sync folder"));
    m_programSyncFolder->setPlaceholderText(tr("the folder of your script"));
    auto *syncLayout = new QHBoxLayout(m_syncRow);
    syncLayout->setContentsMargins(0, 0, 0, 0);
    syncLayout->addWidget(m_programSync);
    syncLayout->addWidget(m_programSyncFolder, 1);

    m_programWarm = new QCheckBox(tr("Start Python warm (torch already imported)"), this);
    m_programWarm->setObjectName(QStringLiteral("launchProgramWarmCheck"));
    m_programWarm->setToolTip(
        tr("python SCRIPT or python -m MODULE is forked from a warm interpreter on each node "
           "that imported torch before the launch, which saves the import on every rank. The "
           "first such launch starts it (and runs cold); a program that cannot start warm "
           "starts cold."));

    m_steps = new QSpinBox(this);
    m_steps->setObjectName(QStringLiteral("launchStepsSpin"));
    m_steps->setRange(1, 100000000);
    m_steps->setValue(100);
    m_batchSize = optionalSpin(this, 1 << 20);
    m_lr = new QDoubleSpinBox(this);
    m_lr->setDecimals(6);
    m_lr->setRange(0, 100);
    m_lr->setSingleStep(0.001);
    m_lr->setSpecialValueText(tr("default"));
    m_optimizer = new QComboBox(this);
    m_optimizer->addItem(tr("default"), QString());
    m_optimizer->addItem(QStringLiteral("SGD"), QStringLiteral("sgd"));
    m_optimizer->addItem(QStringLiteral("AdamW"), QStringLiteral("adamw"));
    m_schedule = new QComboBox(this);
    m_schedule->addItem(tr("default"), QString());
    m_schedule->addItem(tr("constant"), QStringLiteral("constant"));
    m_schedule->addItem(tr("cosine"), QStringLiteral("cosine"));
    m_warmup = optionalSpin(this, 100000000);
    m_seed = optionalSpin(this, 2147483647);
    m_logEvery = optionalSpin(this, 1000000);
    m_stepDelay = optionalSpin(this, 600000);
    m_stepDelay->setSuffix(tr(" ms"));
    m_stepDelay->setToolTip(tr("Sleep per step (keeps a demo run alive long enough to watch)"));
    m_mlpWidth = optionalSpin(this, 1 << 16);
    m_mlpDepth = optionalSpin(this, 1024);
    m_scriptModel = new QLineEdit(this);
    m_scriptModel->setPlaceholderText(tr("model.pt (TorchScript)"));
    m_scriptData = new QLineEdit(this);
    m_scriptData->setPlaceholderText(tr("data.pt"));

    m_nodes = new QSpinBox(this);
    m_nodes->setObjectName(QStringLiteral("launchNodesSpin"));
    m_nodes->setRange(1, 1);
    m_ranksPerNode = new QSpinBox(this);
    m_ranksPerNode->setObjectName(QStringLiteral("launchRanksPerNodeSpin"));
    m_ranksPerNode->setRange(1, 1024);
    m_worldSize = new QLabel(this);
    m_runName = new QLineEdit(this);
    m_runName->setObjectName(QStringLiteral("launchRunNameEdit"));
    m_runName->setPlaceholderText(tr("default: the task, or your script's name"));
    m_maxRestarts = new QSpinBox(this);
    m_maxRestarts->setRange(0, 100);
    m_maxRestarts->setToolTip(
        tr("Restart the whole gang from the last checkpoint this many times after a failure"));
    m_flightRecorder = new QCheckBox(tr("Record collectives (flight recorder)"), this);
    m_flightRecorder->setObjectName(QStringLiteral("launchFlightRecorderCheck"));
    m_flightRecorder->setChecked(true);
    m_flightRecorder->setToolTip(
        tr("torch's flight recorder keeps each rank's last collectives, so that a hang names the "
           "rank and the collective where the ranks parted. Off, a hang is explained by the "
           "ranks' stacks alone (rankdeck-cli launch --no-flight-recorder)."));
    m_detach = new QCheckBox(tr("&Detach (keep running when RankDeck closes)"), this);
    m_detach->setObjectName(QStringLiteral("launchDetachCheck"));
    // Only SSH ranks can outlive their launcher (local ranks stop when its stdin closes);
    // onProfileChanged() enables it for SSH profiles.
    m_detach->setEnabled(false);
    m_extra = new QLineEdit(this);
    m_extra->setObjectName(QStringLiteral("launchExtraArgsEdit"));
    m_extra->setPlaceholderText(tr("more worker flags, e.g. --shuffle --clip-grad-norm 1"));

    m_problems = new ProblemLabel(this);
    m_problems->setObjectName(QStringLiteral("launchProblemsLabel"));

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
    m_launch = buttons->addButton(tr("&Launch"), QDialogButtonBox::AcceptRole);
    m_launch->setObjectName(QStringLiteral("launchButton"));
    m_launch->setDefault(true);
    connect(buttons, &QDialogButtonBox::accepted, this, [this] {
        if (problems().isEmpty()) {
            saveProgramFields();
            accept();
        }
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto *where = new QFormLayout;
    where->addRow(tr("&Profile:"), m_profileCombo);
    auto *size = new QHBoxLayout;
    size->addWidget(m_nodes);
    size->addWidget(new QLabel(QStringLiteral("×"), this));
    size->addWidget(m_ranksPerNode);
    size->addWidget(m_worldSize, 1);
    where->addRow(tr("Nodes × ranks per node:"), size);
    where->addRow(tr("Run &name:"), m_runName);
    where->addRow(tr("Max &restarts:"), m_maxRestarts);
    where->addRow(QString(), m_detach);
    where->addRow(QString(), m_flightRecorder);
    auto *whereBox = new QGroupBox(tr("Where"), this);
    whereBox->setLayout(where);

    auto *what = m_what = new QFormLayout;
    what->addRow(tr("&Task:"), m_task);
    what->addRow(tr("&Steps:"), m_steps);
    what->addRow(tr("&Batch size:"), m_batchSize);
    what->addRow(tr("Le&arning rate:"), m_lr);
    what->addRow(tr("&Optimizer:"), m_optimizer);
    what->addRow(tr("Sc&hedule:"), m_schedule);
    what->addRow(tr("&Warm-up steps:"), m_warmup);
    what->addRow(tr("S&eed:"), m_seed);
    what->addRow(tr("Log every N steps:"), m_logEvery);
    what->addRow(tr("Step delay:"), m_stepDelay);
    what->addRow(tr("MLP width:"), m_mlpWidth);
    what->addRow(tr("MLP depth:"), m_mlpDepth);
    what->addRow(tr("Script model:"), m_scriptModel);
    what->addRow(tr("Script data:"), m_scriptData);
    what->addRow(tr("E&xtra worker flags:"), m_extra);
    what->addRow(tr("Program &command:"), m_programCommand);
    what->addRow(tr("Program directory:"), m_programDirectory);
    what->addRow(tr("S&ync folder:"), m_syncRow);
    what->addRow(tr("Program environment:"), m_programEnvironment);
    what->addRow(tr("Metric patterns:"), m_programMetrics);
    what->addRow(tr("Warm start:"), m_programWarm);
    what->addRow(tr("TensorBoard folder:"), m_programTensorBoard);
    auto *whatBox = new QGroupBox(tr("What"), this);
    whatBox->setLayout(what);

    auto *layout = new QVBoxLayout(this);
    // Resizable, so that a long command or placeholder can be read whole; it grows with the
    // rows of the chosen task, and the room a shorter task leaves goes below the form.
    setSizeGripEnabled(true);
    layout->addWidget(whereBox);
    layout->addWidget(whatBox);
    layout->addStretch(1);
    layout->addWidget(m_problems);
    layout->addWidget(buttons);

    connect(m_profileCombo, &QComboBox::currentIndexChanged, this, &LaunchDialog::onProfileChanged);
    connect(m_task, &QComboBox::currentIndexChanged, this, &LaunchDialog::onTaskChanged);
    for (QSpinBox *spin : {m_nodes, m_ranksPerNode})
        connect(spin, &QSpinBox::valueChanged, this, &LaunchDialog::revalidate);
    for (QLineEdit *edit :
         {m_scriptModel, m_scriptData, m_extra, m_runName, m_programCommand, m_programDirectory,
          m_programEnvironment, m_programMetrics, m_programTensorBoard})
        connect(edit, &QLineEdit::textChanged, this, &LaunchDialog::revalidate);
    connect(m_programSyncFolder, &QLineEdit::textChanged, this, &LaunchDialog::revalidate);
    connect(m_programSyncFolder, &QLineEdit::textEdited, this,
            [this] { m_syncFolderEdited = !m_programSyncFolder->text().isEmpty(); });
    connect(m_programSync, &QCheckBox::toggled, this, [this](bool on) {
        m_programSyncFolder->setEnabled(on);
        revalidate();
    });
    connect(m_programCommand, &QLineEdit::textChanged, this, &LaunchDialog::prefillSyncFolder);
    onProfileChanged();
    onTaskChanged();
    // A placeholder cut by the field's width is read whole on hover.
    const QList<QLineEdit *> edits = findChildren<QLineEdit *>();
    for (QLineEdit *edit : edits)
        if (edit->toolTip().isEmpty() && !edit->placeholderText().isEmpty())
            edit->setToolTip(edit->placeholderText());
    const QSize kept = QSettings().value(QStringLiteral("launchDialog/size")).toSize();
    if (kept.isValid())
        resize(kept.expandedTo(minimumSizeHint()));
}

void LaunchDialog::done(int result)
{
    QSettings().setValue(QStringLiteral("launchDialog/size"), size());
    QDialog::done(result);
}

void LaunchDialog::setProfileName(const QString &name)
{
    const int index = m_profileCombo->findText(name);
    if (index >= 0)
        m_profileCombo->setCurrentIndex(index);
}

QString LaunchDialog::profileName() const
{
    return m_profileCombo->currentText();
}

// The program fields are remembered per profile: the same script usually runs on the same
// cluster, and another cluster has its own paths and environment.
void LaunchDialog::saveProgramFields() const
{
    if (m_task->currentData().toString() != QLatin1String("program"))
        return;
    QSettings settings;
    settings.beginGroup(QStringLiteral("launch-program/") + profileName());
    settings.setValue(QStringLiteral("command"), m_programCommand->text());
    settings.setValue(QStringLiteral("directory"), m_programDirectory->text());
    settings.setValue(QStringLiteral("environment"), m_programEnvironment->text());
    settings.setValue(QStringLiteral("metrics"), m_programMetrics->text());
    settings.setValue(QStringLiteral("tensorboard-dir"), m_programTensorBoard->text());
    settings.setValue(QStringLiteral("sync"), m_programSync->isChecked());
    settings.setValue(QStringLiteral("warm"), m_programWarm->isChecked());
    settings.setValue(QStringLiteral("sync-folder"),
                      m_syncFolderEdited ? m_programSyncFolder->text() : QString());
}

void LaunchDialog::loadProgramFields()
{
    QSettings settings;
    settings.beginGroup(QStringLiteral("launch-program/") + profileName());
    m_programCommand->setText(settings.value(QStringLiteral("command")).toString());
    m_programDirectory->setText(settings.value(QStringLiteral("directory")).toString());
    m_programEnvironment->setText(settings.value(QStringLiteral("environment")).toString());
    m_programMetrics->setText(settings.value(QStringLiteral("metrics")).toString());
    m_programTensorBoard->setText(settings.value(QStringLiteral("tensorboard-dir")).toString());
    m_programSync->setChecked(settings.value(QStringLiteral("sync"), false).toBool());
    m_programWarm->setChecked(settings.value(QStringLiteral("warm"), false).toBool());
    m_programSyncFolder->setEnabled(m_programSync->isChecked());
    // A folder the user typed is kept; otherwise it follows the command again.
    const QString folder = settings.value(QStringLiteral("sync-folder")).toString();
    m_syncFolderEdited = !folder.isEmpty();
    if (m_syncFolderEdited)
        m_programSyncFolder->setText(folder);
    else
        prefillSyncFolder();
}

// The folder of the script: the first argument ending in .py, else the program, when it is a file
// on this machine (a path that only exists on the nodes has nothing to upload).
void LaunchDialog::prefillSyncFolder()
{
    if (m_syncFolderEdited)
        return;
    const QStringList words = QProcess::splitCommand(m_programCommand->text());
    QString script;
    for (const QString &w : words) {
        if (w.endsWith(QLatin1String(".py"))) {
            script = w;
            break;
        }
    }
    if (script.isEmpty() && !words.isEmpty() && words.first().contains(QLatin1Char('/')))
        script = words.first();
    const QFileInfo fi(script);
    m_programSyncFolder->setText(!script.isEmpty() && fi.isFile() ? fi.absolutePath() : QString());
}

void LaunchDialog::onProfileChanged()
{
    const QString name = profileName();
    loadProgramFields();
    m_profileError.clear();
    QList<ProfileError> errors;
    if (name == Profile::builtinLocalName() && (!m_store || !m_store->exists(name))) {
        m_profile = Profile::builtinLocal();
    } else if (!m_store || !m_store->load(name, &m_profile, &errors)) {
        m_profile = Profile();
        QStringList messages;
        for (const ProfileError &e : std::as_const(errors))
            messages << e.toString();
        m_profileError = messages.isEmpty() ? tr("profile: cannot load \"%1\"").arg(name)
                                            : messages.join(QLatin1Char('\n'));
    }
    const int nodeCount = qMax(1, int(m_profile.nodes.size()));
    m_nodes->setRange(1, nodeCount);
    m_nodes->setValue(nodeCount);
    m_nodes->setEnabled(nodeCount > 1);
    m_ranksPerNode->setValue(m_profile.nodes.isEmpty() ? 2 : m_profile.nodes.first().ranksPerNode);
    const bool ssh = !m_profile.isLocal() && !m_profile.nodes.isEmpty();
    m_detach->setEnabled(ssh);
    if (!ssh)
        m_detach->setChecked(false);
    m_detach->setToolTip(ssh ? tr("The ranks keep running on the nodes when RankDeck closes; "
                                  "re-attach from the run list")
                             : tr("Only runs on SSH profiles can keep running without RankDeck"));
    revalidate();
}

void LaunchDialog::onTaskChanged()
{
    const QString task = m_task->currentData().toString();
    const bool program = task == QLatin1String("program");
    // Only the rows of the chosen kind of run are shown: the built-in worker's flags mean
    // nothing to a user's program, and the program's fields nothing to the worker.
    const std::initializer_list<QWidget *> workerRows{
        m_steps,    m_batchSize, m_lr,       m_optimizer, m_schedule,    m_warmup,     m_seed,
        m_logEvery, m_stepDelay, m_mlpWidth, m_mlpDepth,  m_scriptModel, m_scriptData, m_extra};
    for (QWidget *w : workerRows) {
        w->setEnabled(!program);
        m_what->setRowVisible(w, !program);
    }
    for (QLineEdit *edit : {m_programCommand, m_programDirectory, m_programEnvironment,
                            m_programMetrics, m_programTensorBoard}) {
        edit->setEnabled(program);
        m_what->setRowVisible(edit, program);
    }
    for (QWidget *w : {m_syncRow, static_cast<QWidget *>(m_programWarm)}) {
        w->setEnabled(program);
        m_what->setRowVisible(w, program);
    }
    if (!program) {
        m_mlpWidth->setEnabled(task == QLatin1String("mlp"));
        m_mlpDepth->setEnabled(task == QLatin1String("mlp"));
        m_scriptModel->setEnabled(task == QLatin1String("script"));
        m_scriptData->setEnabled(task == QLatin1String("script"));
    }
    revalidate();
}

Profile LaunchDialog::profile() const
{
    Profile p = m_profile;
    if (p.nodes.size() > m_nodes->value())
        p.nodes = p.nodes.mid(0, m_nodes->value());
    p.setRanksPerNode(m_ranksPerNode->value());
    return p;
}

LaunchRequest LaunchDialog::request() const
{
    LaunchRequest r;
    r.name = m_runName->text().trimmed();
    r.maxRestarts = m_maxRestarts->value();
    r.flightRecorder = m_flightRecorder->isChecked();
    if (m_task->currentData().toString() == QLatin1String("program")) {
        r.runsProgram = true;
        r.command = QProcess::splitCommand(m_programCommand->text());
        r.workingDirectory = m_programDirectory->text().trimmed();
        r.environment = QProcess::splitCommand(m_programEnvironment->text());
        r.metricPatterns = QProcess::splitCommand(m_programMetrics->text());
        r.tensorBoardDir = m_programTensorBoard->text().trimmed();
        if (syncEnabled())
            r.syncFolder = syncFolder();
        r.warmPython = m_programWarm->isChecked();
        return r;
    }
    TrainingConfig c; // its flag setters build the worker's command line
    auto set = [&c](const char *flag, const QString &value) {
        if (!value.isEmpty())
            c.setValue(QString::fromLatin1(flag), value);
    };
    auto setInt = [&set](const char *flag, const QSpinBox *spin) {
        if (spin->isEnabled() && spin->value() != spin->minimum())
            set(flag, QString::number(spin->value()));
    };
    set("--task", m_task->currentData().toString());
    set("--steps", QString::number(m_steps->value()));
    setInt("--batch-size", m_batchSize);
    if (m_lr->value() > 0)
        set("--lr", QString::number(m_lr->value(), 'g', 10));
    set("--optimizer", m_optimizer->currentData().toString());
    set("--schedule", m_schedule->currentData().toString());
    setInt("--warmup-steps", m_warmup);
    setInt("--seed", m_seed);
    setInt("--log-every", m_logEvery);
    setInt("--step-delay-ms", m_stepDelay);
    setInt("--mlp-width", m_mlpWidth);
    setInt("--mlp-depth", m_mlpDepth);
    if (m_scriptModel->isEnabled())
        set("--model", m_scriptModel->text().trimmed());
    if (m_scriptData->isEnabled())
        set("--data", m_scriptData->text().trimmed());
    // Extra flags go last: the worker's parser lets the last occurrence win.
    r.command = c.workerArguments + QProcess::splitCommand(m_extra->text());
    return r;
}

TrainingConfig LaunchDialog::config() const
{
    return request().config(profile());
}

bool LaunchDialog::detach() const
{
    return m_detach->isChecked();
}

QStringList LaunchDialog::problems() const
{
    QStringList out;
    if (!m_profileError.isEmpty())
        out << m_profileError;
    // What only this form can get wrong: an empty sync folder, the script task's two files, extra
    // flags that do not split; the launch's own rules are LaunchRequest's, as for the CLI.
    const QString task = m_task->currentData().toString();
    if (task == QLatin1String("program") && syncEnabled() && syncFolder().isEmpty())
        out << tr("sync folder: the folder to upload to the nodes, e.g. your script's");
    if (task == QLatin1String("script")) {
        if (m_scriptModel->text().trimmed().isEmpty())
            out << tr("script model: a TorchScript file is needed for the script task");
        if (m_scriptData->text().trimmed().isEmpty())
            out << tr("script data: a tensor file is needed for the script task");
    }
    const QString extra = m_extra->text().trimmed();
    if (task != QLatin1String("program") && !extra.isEmpty() &&
        QProcess::splitCommand(extra).isEmpty())
        out << tr("extra worker flags: cannot split \"%1\" into arguments").arg(extra);
    for (const LaunchRequest::Problem &p : request().problems())
        out << LaunchRequest::text(p, labelOf(p.field));
    return out;
}

void LaunchDialog::revalidate()
{
    m_worldSize->setText(tr("= %n rank(s)", nullptr, m_nodes->value() * m_ranksPerNode->value()));
    const QStringList list = problems();
    m_problems->setText(list.join(QLatin1Char('\n')));
    m_problems->setVisible(!list.isEmpty());
    m_launch->setEnabled(list.isEmpty());
}

void LaunchDialog::setTask(const QString &task)
{
    const int index = m_task->findData(task);
    if (index >= 0)
        m_task->setCurrentIndex(index);
}

void LaunchDialog::setSteps(int steps)
{
    m_steps->setValue(steps);
}

void LaunchDialog::setRanksPerNode(int ranks)
{
    m_ranksPerNode->setValue(ranks);
}

void LaunchDialog::setRunName(const QString &name)
{
    m_runName->setText(name);
}

void LaunchDialog::setProgramCommand(const QString &commandLine)
{
    m_programCommand->setText(commandLine);
}

void LaunchDialog::setSyncFolder(bool enabled, const QString &folder)
{
    m_programSync->setChecked(enabled);
    m_syncFolderEdited = !folder.isEmpty();
    if (m_syncFolderEdited)
        m_programSyncFolder->setText(folder);
    else
        prefillSyncFolder();
}

QString LaunchDialog::syncFolder() const
{
    return m_programSyncFolder->text().trimmed();
}

bool LaunchDialog::syncEnabled() const
{
    return m_programSync->isChecked() &&
           m_task->currentData().toString() == QLatin1String("program");
}

void LaunchDialog::setExtraArguments(const QString &arguments)
{
    m_extra->setText(arguments);
}

} // namespace rankdeck
