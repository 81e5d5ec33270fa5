// SPDX-License-Identifier: GPL-3.0-or-later
//
// `rankdeck --screenshots DIR` (scripts/screenshots.sh runs it under Xvfb): runs a healthy
// 4-rank run, the same at another learning rate (the two compared on the Loss page), one with
// an injected crash and one with a slowed rank on the local profile, a user's script whose ranks
// part at a collective (uneven shards: the verdict on the Overview and Failures pages), and saves
// each page, the
// launch form and the profile editor as PNG files for the README. Then quits.
#pragma once

#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>

namespace rankdeck {

class MainWindow;
class RunController;
struct Profile;
struct TrainingConfig;

class ScreenshotTour : public QObject
{
    Q_OBJECT
public:
    ScreenshotTour(MainWindow *window, const QString &directory, QObject *parent = nullptr);

    void start();

signals:
    void done(bool ok);

private:
    void shoot(const QString &name);
    void shootWidget(QWidget *widget, const QString &name);
    void shootDialogs();
    // A 4-rank mlp run (its id kept for the comparison); false after fail().
    bool startMlpRun(const QString &name, const QStringList &extraArguments,
                     void (ScreenshotTour::*next)());
    void startHealthyRun();
    void startFailingRun();
    // Launches the run and calls next once it has ended; nullptr (and the tour failed) when it
    // could not start.
    RunController *launchThen(const Profile &profile, const TrainingConfig &config,
                              void (ScreenshotTour::*next)());
    void waitForEnd(RunController *run, void (ScreenshotTour::*next)());
    void afterHealthyRun();
    void startCompareRun();
    void afterCompareRun();
    void afterFailingRun();
    void startStragglerRun();
    void afterStragglerRun();
    void startProgramRun();
    void afterProgramRun();
    void startHangRun();
    void startSlowRun();
    void startManyRanksRun();
    void afterManyRanksRun();
    void finish();
    void fail(const QString &message);

    MainWindow *m_window;
    QString m_directory;
    QStringList m_comparedRunIds;
    bool m_ok = true;
};

} // namespace rankdeck
