// SPDX-License-Identifier: GPL-3.0-or-later
//
// rankdeck: the desktop app. `rankdeck --demo` opens the window and starts a 2-rank demo run on
// the built-in local profile.
#include "appicon.h"
#include "mainwindow.h"
#include "screenshottour.h"
#include "util/buildversion.h"

#include <QApplication>
#include <QCommandLineParser>

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("rankdeck"));
    QApplication::setOrganizationName(QStringLiteral("rankdeck"));
    QApplication::setApplicationDisplayName(QStringLiteral("RankDeck"));
    QApplication::setApplicationVersion(rankdeck::BuildVersion::describe());
    QApplication::setDesktopFileName(QStringLiteral("rankdeck"));
    QApplication::setWindowIcon(rankdeck::appIcon());

    QCommandLineParser parser;
    parser.setApplicationDescription(QCoreApplication::translate(
        "main", "Launch distributed libtorch training and watch its ranks."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption demo(
        QStringLiteral("demo"),
        QCoreApplication::translate("main", "Start a 2-rank demo run on the local profile."));
    parser.addOption(demo);
    const QCommandLineOption screenshots(
        QStringLiteral("screenshots"),
        QCoreApplication::translate("main",
                                    "Run two demo runs, save every page as PNG into <dir>, quit."),
        QStringLiteral("dir"));
    parser.addOption(screenshots);
    parser.process(app);

    rankdeck::MainWindow window;
    window.show();
    if (parser.isSet(screenshots)) {
        auto *tour = new rankdeck::ScreenshotTour(&window, parser.value(screenshots), &window);
        QObject::connect(tour, &rankdeck::ScreenshotTour::done, &app,
                         [](bool ok) { QCoreApplication::exit(ok ? 0 : 1); });
        tour->start();
    } else if (parser.isSet(demo)) {
        window.startDemo();
    }
    return QApplication::exec();
}
