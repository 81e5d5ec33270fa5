// SPDX-License-Identifier: GPL-3.0-or-later
//
// Answers the SSH transport's questions (unknown host key, key passphrase, password) with
// dialogs. The transport asks from a node's connection thread and may block; each question hops
// to the GUI thread with a blocking queued call, so the dialog is modal for the window and the
// connection thread simply waits for the answer.
#pragma once

#include "transport/ssh/sshinteraction.h"

#include <QObject>
#include <QPointer>

class QWidget;

namespace rankdeck {

class GuiSshInteraction : public QObject, public SshInteraction
{
    Q_OBJECT
public:
    explicit GuiSshInteraction(QWidget *dialogParent);

    HostKeyDecision unknownHostKey(const HostKeyQuestion &question) override;
    std::optional<QByteArray> passphrase(const QString &host, const QString &keyFile) override;
    std::optional<QByteArray> secret(const QString &host, const QString &user,
                                     const QString &prompt, bool echo) override;

private:
    HostKeyDecision askHostKey(const HostKeyQuestion &question);
    std::optional<QByteArray> askText(const QString &title, const QString &label, bool echo);
    template <typename F> auto onGuiThread(F f) -> decltype(f());

    QPointer<QWidget> m_parent;
};

} // namespace rankdeck
