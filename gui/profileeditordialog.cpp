// SPDX-License-Identifier: GPL-3.0-or-later
#include "profileeditordialog.h"

#include "problemlabel.h"

#include "transport/profilekindform.h"

#include "config/metricpattern.h"
#include "config/profilekind.h"
#include "config/profilestore.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

namespace rankdeck {

namespace {
enum NodeColumn
{
    ColHost,
    ColPort,
    ColUser,
    ColKey,
    ColRanks,
    ColGpus,
    NodeColumnCount
};

QSpinBox *timeoutSpin(QWidget *parent, int max)
{
    auto *spin = new QSpinBox(parent);
    spin->setRange(0, max);
    spin->setSuffix(QCoreApplication::translate("rankdeck::ProfileEditorDialog", " s"));
    return spin;
}
} // namespace

ProfileEditorDialog::ProfileEditorDialog(ProfileStore *store, QWidget *parent)
    : QDialog(parent), m_store(store)
{
    setWindowTitle(tr("Cluster profile"));
    setObjectName(QStringLiteral("profileEditorDialog"));

    m_name = new QLineEdit(this);
    m_name->setObjectName(QStringLiteral("profileNameEdit"));
    m_name->setPlaceholderText(tr("e.g. gpu-cluster"));
    m_transport = new QComboBox(this);
    m_transport->setObjectName(QStringLiteral("profileTransportCombo"));
    // Every kind, SSH (a new profile's) first; a kind with a table of its own brings its form.
    QStringList kinds = ProfileKinds::names();
    kinds.move(kinds.indexOf(QStringLiteral("ssh")), 0);
    for (const QString &kind : std::as_const(kinds)) {
        m_transport->addItem(ProfileKinds::find(kind)->displayName(), kind);
        if (ProfileKindForm *form = ProfileKindForms::create(kind, this)) {
            m_kindForms.insert(kind, form);
            connect(form, &ProfileKindForm::changed, this, &ProfileEditorDialog::revalidate);
        }
    }

    m_nodes = new QTableWidget(0, NodeColumnCount, this);
    m_nodes->setObjectName(QStringLiteral("profileNodesTable"));
    m_nodes->setAccessibleName(tr("Nodes"));
    m_nodes->setHorizontalHeaderLabels(
        {tr("Host or SSH alias"), tr("Port"), tr("User"), tr("Key file"), tr("Ranks"), tr("GPUs")});
    m_nodes->horizontalHeader()->setSectionResizeMode(ColHost, QHeaderView::Stretch);
    m_nodes->horizontalHeader()->setSectionResizeMode(ColKey, QHeaderView::Stretch);
    m_nodes->verticalHeader()->setVisible(false);
    m_nodes->setSelectionBehavior(QAbstractItemView::SelectRows);
    // Five nodes in view before it scrolls: a profile of a few nodes is read at a glance.
    m_nodes->setMinimumHeight(m_nodes->horizontalHeader()->sizeHint().height() +
                              5 * m_nodes->verticalHeader()->defaultSectionSize() +
                              2 * m_nodes->frameWidth());
    m_addNode = new QPushButton(tr("&Add node"), this);
    m_addNode->setObjectName(QStringLiteral("addNodeButton"));
    m_removeNode = new QPushButton(tr("&Remove node"), this);
    connect(m_addNode, &QPushButton::clicked, this, &ProfileEditorDialog::addNode);
    connect(m_removeNode, &QPushButton::clicked, this, &ProfileEditorDialog::removeSelectedNodes);

    m_rendezvous = new QLineEdit(this);
    m_rendezvous->setPlaceholderText(tr("first node"));
    m_workerDirectory = new QLineEdit(this);
    m_workerDirectory->setPlaceholderText(QStringLiteral("~/.cache/rankdeck/worker"));
    m_libtorchPath = new QLineEdit(this);
    m_libtorchPath->setPlaceholderText(tr("detect from the node's Python torch"));

    m_environment = new QTableWidget(0, 2, this);
    m_environment->setObjectName(QStringLiteral("profileEnvironmentTable"));
    m_environment->setAccessibleName(tr("Environment on every rank"));
    m_environment->setHorizontalHeaderLabels({tr("Variable"), tr("Value")});
    m_environment->horizontalHeader()->setStretchLastSection(true);
    m_environment->verticalHeader()->setVisible(false);
    m_environment->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_environment->setMaximumHeight(110);
    m_metrics = new QPlainTextEdit(this);
    m_metrics->setObjectName(QStringLiteral("profileMetricsEdit"));
    m_metrics->setAccessibleName(tr("Metric patterns"));
    m_metrics->setPlaceholderText(tr("tokens_per_s=([0-9.]+) tok/s"));
    m_metrics->setMaximumHeight(60);
    m_metrics->setToolTip(tr("Scalars to plot from the lines your own program prints on this "
                             "cluster: one NAME=REGEX per line, the regex with one capture "
                             "group (as launch --metric)."));
    auto *addEnv = new QPushButton(tr("Add &variable"), this);
    addEnv->setObjectName(QStringLiteral("addVariableButton"));
    connect(addEnv, &QPushButton::clicked, this, &ProfileEditorDialog::addEnvironmentVariable);
    m_removeVariable = new QPushButton(tr("Re&move variable"), this);
    m_removeVariable->setObjectName(QStringLiteral("removeVariableButton"));
    m_removeVariable->setEnabled(false);
    connect(m_removeVariable, &QPushButton::clicked, this,
            &ProfileEditorDialog::removeSelectedVariables);
    connect(m_environment, &QTableWidget::itemSelectionChanged, this, [this] {
        m_removeVariable->setEnabled(m_environment->selectionModel()->hasSelection());
    });

    m_backend = new QComboBox(this);
    m_backend->setObjectName(QStringLiteral("profileBackendCombo"));
    m_backend->addItem(tr("auto (NCCL with GPUs, else Gloo)"), QStringLiteral("auto"));
    m_backend->addItem(QStringLiteral("NCCL"), QStringLiteral("nccl"));
    m_backend->addItem(QStringLiteral("Gloo"), QStringLiteral("gloo"));
    m_connectTimeout = timeoutSpin(this, 3600);
    m_rendezvousTimeout = timeoutSpin(this, 86400);
    m_heartbeatTimeout = timeoutSpin(this, 3600);
    m_collectiveTimeout = timeoutSpin(this, 86400);
    m_orphanGrace = timeoutSpin(this, 86400);
    m_orphanGrace->setToolTip(
        tr("SSH ranks of a run that is not detachable end this long after their launcher is "
           "gone (killed, or its link cut); detachable runs keep theirs"));

    m_problems = new ProblemLabel(this);
    m_problems->setObjectName(QStringLiteral("profileProblemsLabel"));
    m_problems->setTextFormat(Qt::PlainText);

    m_testButton = new QPushButton(tr("T&est connection"), this);
    m_testButton->setObjectName(QStringLiteral("testConnectionButton"));
    m_testButton->setToolTip(tr("Connect to every node and report its OS, GPUs and libtorch; "
                                "on Slurm, check that sbatch, squeue and scancel answer"));
    connect(m_testButton, &QPushButton::clicked, this, [this] {
        m_connectionReport->setVisible(true);
        m_connectionReport->setPlainText(tr("Checking nodes…"));
        emit testConnectionRequested(profile());
    });
    m_connectionReport = new QPlainTextEdit(this);
    m_connectionReport->setReadOnly(true);
    m_connectionReport->setMaximumHeight(100);
    m_connectionReport->setVisible(false);

    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_buttons->button(QDialogButtonBox::Ok)->setText(tr("&Save"));
    m_buttons->addButton(m_testButton, QDialogButtonBox::ActionRole);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &ProfileEditorDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &ProfileEditorDialog::reject);

    auto *general = new QFormLayout;
    general->addRow(tr("&Name:"), m_name);
    general->addRow(tr("&Transport:"), m_transport);
    general->addRow(tr("Rende&zvous address:"), m_rendezvous);
    general->addRow(tr("&Worker directory on nodes:"), m_workerDirectory);
    general->addRow(tr("&libtorch on nodes:"), m_libtorchPath);
    general->addRow(tr("&Backend:"), m_backend);

    auto *timeouts = new QFormLayout;
    timeouts->addRow(tr("Connect:"), m_connectTimeout);
    timeouts->addRow(tr("Rendezvous:"), m_rendezvousTimeout);
    timeouts->addRow(tr("Heartbeat:"), m_heartbeatTimeout);
    timeouts->addRow(tr("Collective:"), m_collectiveTimeout);
    timeouts->addRow(tr("Orphan grace:"), m_orphanGrace);
    auto *timeoutBox = new QGroupBox(tr("Timeouts"), this);
    timeoutBox->setLayout(timeouts);

    auto *top = new QHBoxLayout;
    top->addLayout(general, 2);
    top->addWidget(timeoutBox, 1);

    auto *nodeButtons = new QHBoxLayout;
    nodeButtons->addWidget(m_addNode);
    nodeButtons->addWidget(m_removeNode);
    nodeButtons->addStretch();
    nodeButtons->addWidget(addEnv);
    nodeButtons->addWidget(m_removeVariable);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    m_nodesLabel = new QLabel(tr("Nodes:"), this);
    layout->addWidget(m_nodesLabel);
    layout->addWidget(m_nodes, 1);
    for (ProfileKindForm *form : std::as_const(m_kindForms))
        layout->addWidget(form, 1);
    layout->addLayout(nodeButtons);
    layout->addWidget(new QLabel(tr("Environment on every rank:"), this));
    layout->addWidget(m_environment);
    layout->addWidget(
        new QLabel(tr("Metric patterns for your program (one NAME=REGEX per line):"), this));
    layout->addWidget(m_metrics);
    layout->addWidget(m_problems);
    layout->addWidget(m_connectionReport);
    layout->addWidget(m_buttons);

    for (QLineEdit *edit : {m_name, m_rendezvous, m_workerDirectory, m_libtorchPath})
        connect(edit, &QLineEdit::textChanged, this, &ProfileEditorDialog::revalidate);
    for (QComboBox *combo : {m_transport, m_backend})
        connect(combo, &QComboBox::currentIndexChanged, this, &ProfileEditorDialog::revalidate);
    for (QSpinBox *spin : {m_connectTimeout, m_rendezvousTimeout, m_heartbeatTimeout,
                           m_collectiveTimeout, m_orphanGrace})
        connect(spin, &QSpinBox::valueChanged, this, &ProfileEditorDialog::revalidate);
    connect(m_nodes, &QTableWidget::itemChanged, this, &ProfileEditorDialog::revalidate);
    connect(m_environment, &QTableWidget::itemChanged, this, &ProfileEditorDialog::revalidate);
    connect(m_metrics, &QPlainTextEdit::textChanged, this, &ProfileEditorDialog::revalidate);

    Profile fresh;
    fresh.transport = QStringLiteral("ssh");
    setProfile(fresh, false);
    // The size the user gave it last time, else room for five nodes and the rest.
    const QSize kept = QSettings().value(QStringLiteral("profileEditor/size")).toSize();
    resize(kept.isValid() ? kept.expandedTo(minimumSizeHint()) : QSize(760, 640));
}

void ProfileEditorDialog::setProfile(const Profile &p, bool existing)
{
    m_existing = existing;
    const QSignalBlocker b1(m_nodes), b2(m_environment);
    m_name->setText(p.name);
    m_name->setReadOnly(existing);
    m_transport->setCurrentIndex(qMax(0, m_transport->findData(p.transport)));
    m_rendezvous->setText(p.rendezvousAddress);
    m_workerDirectory->setText(p.workerDirectory);
    m_libtorchPath->setText(p.libtorchPath);
    m_backend->setCurrentIndex(qMax(0, m_backend->findData(p.backend)));
    m_connectTimeout->setValue(p.connectTimeoutSec);
    m_rendezvousTimeout->setValue(p.rendezvousTimeoutSec);
    m_heartbeatTimeout->setValue(p.heartbeatTimeoutSec);
    m_collectiveTimeout->setValue(p.collectiveTimeoutSec);
    m_orphanGrace->setValue(p.orphanGraceSec);
    m_nodes->setRowCount(0);
    for (const ProfileNode &n : p.nodes) {
        const int row = m_nodes->rowCount();
        m_nodes->insertRow(row);
        m_nodes->setItem(row, ColHost, new QTableWidgetItem(n.host));
        m_nodes->setItem(row, ColPort, new QTableWidgetItem(QString::number(n.port)));
        m_nodes->setItem(row, ColUser, new QTableWidgetItem(n.user));
        m_nodes->setItem(row, ColKey, new QTableWidgetItem(n.identityFile));
        m_nodes->setItem(row, ColRanks, new QTableWidgetItem(QString::number(n.ranksPerNode)));
        m_nodes->setItem(row, ColGpus, new QTableWidgetItem(QString::number(n.gpusPerNode)));
    }
    for (ProfileKindForm *form : std::as_const(m_kindForms))
        form->setProfile(p);
    m_metrics->setPlainText(p.metricPatterns.join(QLatin1Char('\n')));
    m_environment->setRowCount(0);
    for (auto it = p.environment.cbegin(); it != p.environment.cend(); ++it) {
        const int row = m_environment->rowCount();
        m_environment->insertRow(row);
        m_environment->setItem(row, 0, new QTableWidgetItem(it.key()));
        m_environment->setItem(row, 1, new QTableWidgetItem(it.value()));
    }
    revalidate();
}

int ProfileEditorDialog::cellInt(int row, int column, bool *ok) const
{
    const QTableWidgetItem *item = m_nodes->item(row, column);
    const QString text = item ? item->text().trimmed() : QString();
    return text.toInt(ok);
}

Profile ProfileEditorDialog::profile() const
{
    Profile p;
    p.name = m_name->text().trimmed();
    p.transport = m_transport->currentData().toString();
    p.rendezvousAddress = m_rendezvous->text().trimmed();
    p.workerDirectory = m_workerDirectory->text().trimmed();
    p.libtorchPath = m_libtorchPath->text().trimmed();
    p.backend = m_backend->currentData().toString();
    p.connectTimeoutSec = m_connectTimeout->value();
    p.rendezvousTimeoutSec = m_rendezvousTimeout->value();
    p.heartbeatTimeoutSec = m_heartbeatTimeout->value();
    p.collectiveTimeoutSec = m_collectiveTimeout->value();
    p.orphanGraceSec = m_orphanGrace->value();
    auto text = [this](int row, int column) {
        const QTableWidgetItem *item = m_nodes->item(row, column);
        return item ? item->text().trimmed() : QString();
    };
    if (const ProfileKindForm *form = m_kindForms.value(p.transport))
        form->applyTo(&p);
    // A kind that picks the nodes (Slurm): the table is not the profile's.
    const bool kindChoosesNodes = p.kindChoosesNodes();
    for (int row = 0; row < m_nodes->rowCount() && !kindChoosesNodes; ++row) {
        ProfileNode n;
        n.host = text(row, ColHost);
        n.user = text(row, ColUser);
        n.identityFile = text(row, ColKey);
        bool ok = false;
        // Unparsable numbers become values core rejects, so the message names the field.
        n.port = cellInt(row, ColPort, &ok);
        if (!ok)
            n.port = -1;
        n.ranksPerNode = cellInt(row, ColRanks, &ok);
        if (!ok)
            n.ranksPerNode = 0;
        n.gpusPerNode = text(row, ColGpus).isEmpty() ? 0 : cellInt(row, ColGpus, &ok);
        if (!ok)
            n.gpusPerNode = -1;
        p.nodes.append(n);
    }
    for (int row = 0; row < m_environment->rowCount(); ++row) {
        const QTableWidgetItem *key = m_environment->item(row, 0);
        const QTableWidgetItem *value = m_environment->item(row, 1);
        if (key && !key->text().trimmed().isEmpty())
            p.environment.insert(key->text().trimmed(), value ? value->text() : QString());
    }
    for (const QString &line : m_metrics->toPlainText().split(QLatin1Char('\n')))
        if (!line.trimmed().isEmpty())
            p.metricPatterns << line.trimmed();
    return p;
}

QStringList ProfileEditorDialog::problems() const
{
    const Profile p = profile();
    QStringList out;
    if (p.name.isEmpty())
        out << tr("name: missing");
    else if (!ProfileStore::isValidName(p.name))
        out << tr("name: \"%1\" is not valid (letters, digits, '.', '_', '-')").arg(p.name);
    else if (!m_existing && m_store && m_store->exists(p.name))
        out << tr("name: a profile called \"%1\" exists already").arg(p.name);
    static const QRegularExpression envName(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*\\z"));
    for (int row = 0; row < m_environment->rowCount(); ++row) {
        const QTableWidgetItem *key = m_environment->item(row, 0);
        const QString name = key ? key->text().trimmed() : QString();
        if (!name.isEmpty() && !envName.match(name).hasMatch())
            out << tr("environment: \"%1\" is not a variable name").arg(name);
    }
    for (const QString &spec : std::as_const(p.metricPatterns)) {
        MetricPattern pattern;
        QString why;
        if (!parseMetricPattern(spec, &pattern, &why))
            out << tr("metrics: %1").arg(why);
    }
    if (const ProfileKindForm *form = m_kindForms.value(p.transport))
        out << form->problems();
    for (int row = 0; row < m_nodes->rowCount() && !p.kindChoosesNodes(); ++row) {
        bool ok = false;
        cellInt(row, ColPort, &ok);
        if (!ok)
            out << tr("nodes[%1].port: not a number").arg(row);
        cellInt(row, ColRanks, &ok);
        if (!ok)
            out << tr("nodes[%1].ranks_per_node: not a number").arg(row);
    }
    for (const ProfileError &e : ProfileStore::validate(p))
        out << (e.field.isEmpty() ? e.message : tr("%1: %2").arg(e.field, e.message));
    out.removeDuplicates();
    return out;
}

void ProfileEditorDialog::revalidate()
{
    const QStringList list = problems();
    m_problems->setText(list.join(QLatin1Char('\n')));
    m_problems->setVisible(!list.isEmpty());
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(list.isEmpty());
    const QString transport = m_transport->currentData().toString();
    // Every kind but local processes has something to reach (nodes, a login).
    m_testButton->setEnabled(list.isEmpty() && transport != QLatin1String("local"));
    const ProfileKind *kind = ProfileKinds::find(transport);
    const bool kindChoosesNodes = kind && kind->choosesNodes();
    for (QWidget *w : {static_cast<QWidget *>(m_nodes), static_cast<QWidget *>(m_nodesLabel),
                       static_cast<QWidget *>(m_addNode), static_cast<QWidget *>(m_removeNode)})
        w->setVisible(!kindChoosesNodes);
    for (auto it = m_kindForms.cbegin(); it != m_kindForms.cend(); ++it)
        it.value()->setVisible(it.key() == transport);
}

void ProfileEditorDialog::addNode()
{
    const int row = m_nodes->rowCount();
    m_nodes->insertRow(row);
    const QSignalBlocker blocker(m_nodes);
    m_nodes->setItem(row, ColHost, new QTableWidgetItem);
    m_nodes->setItem(row, ColPort, new QTableWidgetItem(QStringLiteral("22")));
    m_nodes->setItem(row, ColUser, new QTableWidgetItem);
    m_nodes->setItem(row, ColKey, new QTableWidgetItem);
    m_nodes->setItem(row, ColRanks, new QTableWidgetItem(QStringLiteral("1")));
    m_nodes->setItem(row, ColGpus, new QTableWidgetItem(QStringLiteral("0")));
    m_nodes->setCurrentCell(row, ColHost);
    revalidate();
}

namespace {

// The selected rows, or the current one when none is selected, removed.
void removeSelectedRows(QTableWidget *table)
{
    QList<int> rows;
    const QModelIndexList selected = table->selectionModel()->selectedRows();
    for (const QModelIndex &index : selected)
        rows << index.row();
    if (rows.isEmpty() && table->currentRow() >= 0)
        rows << table->currentRow();
    std::sort(rows.rbegin(), rows.rend());
    for (int row : rows)
        table->removeRow(row);
}

} // namespace

void ProfileEditorDialog::removeSelectedNodes()
{
    removeSelectedRows(m_nodes);
    revalidate();
}

void ProfileEditorDialog::removeSelectedVariables()
{
    removeSelectedRows(m_environment);
    revalidate();
}

void ProfileEditorDialog::addEnvironmentVariable()
{
    const int row = m_environment->rowCount();
    m_environment->insertRow(row);
    m_environment->setCurrentCell(row, 0);
    m_environment->editItem(m_environment->item(row, 0));
}

void ProfileEditorDialog::setConnectionReport(const QString &text)
{
    m_connectionReport->setVisible(true);
    m_connectionReport->setPlainText(text);
}

void ProfileEditorDialog::done(int result)
{
    QSettings().setValue(QStringLiteral("profileEditor/size"), size());
    QDialog::done(result);
}

void ProfileEditorDialog::accept()
{
    const QStringList list = problems();
    if (!list.isEmpty())
        return;
    if (m_store) {
        QString error;
        if (!m_store->save(profile(), m_existing, &error)) {
            QMessageBox::warning(this, tr("Cannot save the profile"), error);
            return;
        }
    }
    QDialog::accept();
}

} // namespace rankdeck
