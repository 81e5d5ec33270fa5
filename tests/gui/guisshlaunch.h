// SPDX-License-Identifier: GPL-3.0-or-later
//
// What the GUI's SSH tests (tst_guidetach, tst_guikill) do the same way: the two-node Gloo
// profile they launch on, and a launch through the real launch form with clicks, as a user does.
// Both say what went wrong instead of failing a test themselves: tst_guikill's GUI child is no
// test function.
#pragma once

#include "config/profile.h"
#include "config/profilestore.h"
#include "fixtureprofile.h"
#include "launchdialog.h"
#include "mainwindow.h"
#include "run/runcontroller.h"
#include "runview.h"
#include "sidepanel.h"
#include "sshfixture.h"

#include <QCheckBox>
#include <QLineEdit>
#include <QPushButton>
#include <QString>
#include <QTest>
#include <QToolButton>

namespace rankdeck::testing {

// Saves `name`: the fixture's first two nodes, one rank each, Gloo, timeouts for a loaded
// machine. Empty on success, else why not.
inline QString saveSshPairProfile(const SshFixture &ssh, const QString &name)
{
    Profile p = fixtureProfile(ssh, name, 2, 1);
    p.backend = QStringLiteral("gloo");
    p.connectTimeoutSec = 10;
    p.rendezvousTimeoutSec = 60;
    p.heartbeatTimeoutSec = 30;
    QString error;
    return ProfileStore().save(p, true, &error) ? QString() : error;
}

// Launches the worker's linear task on `profile` with clicks: the profile in the side panel, its
// launch button, the form's steps and extra worker arguments, the Detach box when `detach`,
// Launch. Returns the run the window then shows, or nullptr with the reason in *why.
inline RunController *launchThroughTheForm(MainWindow *window, const QString &profile, int steps,
                                           const QString &extraArguments, bool detach, QString *why)
{
    window->sidePanel()->setCurrentProfile(profile);
    QTest::mouseClick(
        window->sidePanel()->findChild<QToolButton *>(QStringLiteral("sideLaunchButton")),
        Qt::LeftButton);
    auto *dialog = window->findChild<LaunchDialog *>();
    if (!dialog || !dialog->isVisible() || dialog->profileName() != profile) {
        *why = QStringLiteral("the launch button opened no launch form for %1").arg(profile);
        return nullptr;
    }
    dialog->setTask(QStringLiteral("linear"));
    dialog->setSteps(steps);
    QTest::keyClicks(dialog->findChild<QLineEdit *>(QStringLiteral("launchExtraArgsEdit")),
                     extraArguments);
    auto *detachBox = dialog->findChild<QCheckBox *>(QStringLiteral("launchDetachCheck"));
    if (!detachBox || !detachBox->isEnabled()) {
        *why = QStringLiteral("the launch form offers no Detach box for %1").arg(profile);
        return nullptr;
    }
    if (detach)
        QTest::mouseClick(detachBox, Qt::LeftButton);
    if (dialog->detach() != detach || !dialog->problems().isEmpty()) {
        *why = QStringLiteral("the launch form: detach %1, problems: %2")
                   .arg(dialog->detach())
                   .arg(dialog->problems().join(u'\n'));
        return nullptr;
    }
    QTest::mouseClick(dialog->launchButton(), Qt::LeftButton);
    RunController *run = window->runView()->run();
    if (!run || run->detachRequested() != detach) {
        *why =
            run ? QStringLiteral("the run was launched with detach %1").arg(run->detachRequested())
                : QStringLiteral("Launch started no run");
        return nullptr;
    }
    return run;
}

} // namespace rankdeck::testing
