// SPDX-License-Identifier: GPL-3.0-or-later
#include "guisshinteraction.h"

#include <QInputDialog>
#include <QMessageBox>
#include <QPushButton>
#include <QThread>
#include <QWidget>

namespace rankdeck {

GuiSshInteraction::GuiSshInteraction(QWidget *dialogParent)
    : QObject(nullptr), m_parent(dialogParent)
{}

template <typename F> auto GuiSshInteraction::onGuiThread(F f) -> decltype(f())
{
    if (QThread::currentThread() == thread())
        return f();
    decltype(f()) result{};
    QMetaObject::invokeMethod(
        this, [&result, &f] { result = f(); }, Qt::BlockingQueuedConnection);
    return result;
}

SshInteraction::HostKeyDecision GuiSshInteraction::unknownHostKey(const HostKeyQuestion &question)
{
    return onGuiThread([this, &question] { return askHostKey(question); });
}

SshInteraction::HostKeyDecision GuiSshInteraction::askHostKey(const HostKeyQuestion &q)
{
    QMessageBox box(m_parent);
    box.setIcon(QMessageBox::Warning);
    box.setWindowTitle(tr("Unknown host key"));
    const QString where = q.address.isEmpty() || q.address == q.host
                              ? QStringLiteral("%1:%2").arg(q.host).arg(q.port)
                              : QStringLiteral("%1 (%2:%3)").arg(q.host, q.address).arg(q.port);
    box.setText(tr("The authenticity of host %1 cannot be established.").arg(where));
    box.setInformativeText(
        tr("%1 key fingerprint:\n%2\n\nOnly continue if this is the fingerprint you expect.")
            .arg(q.keyType, q.fingerprint));
    box.setDetailedText(
        tr("An accepted and remembered key is written to %1.").arg(q.knownHostsFile));
    QPushButton *once = box.addButton(tr("Accept &once"), QMessageBox::AcceptRole);
    QPushButton *remember = box.addButton(tr("Accept and &remember"), QMessageBox::AcceptRole);
    QPushButton *reject = box.addButton(tr("&Reject"), QMessageBox::RejectRole);
    box.setDefaultButton(reject);
    box.exec();
    if (box.clickedButton() == once)
        return HostKeyDecision::AcceptOnce;
    if (box.clickedButton() == remember)
        return HostKeyDecision::AcceptAndRemember;
    return HostKeyDecision::Reject;
}

std::optional<QByteArray> GuiSshInteraction::askText(const QString &title, const QString &label,
                                                     bool echo)
{
    bool ok = false;
    const QString text = QInputDialog::getText(
        m_parent, title, label, echo ? QLineEdit::Normal : QLineEdit::Password, QString(), &ok);
    if (!ok)
        return std::nullopt;
    return text.toUtf8();
}

std::optional<QByteArray> GuiSshInteraction::passphrase(const QString &host, const QString &keyFile)
{
    return onGuiThread([&] {
        return askText(tr("Key passphrase"),
                       tr("Passphrase for %1 (connecting to %2):").arg(keyFile, host), false);
    });
}

std::optional<QByteArray> GuiSshInteraction::secret(const QString &host, const QString &user,
                                                    const QString &prompt, bool echo)
{
    return onGuiThread([&] {
        const QString who = user.isEmpty() ? host : QStringLiteral("%1@%2").arg(user, host);
        return askText(tr("SSH authentication"), tr("%1\n%2").arg(who, prompt), echo);
    });
}

} // namespace rankdeck
