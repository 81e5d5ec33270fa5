// SPDX-License-Identifier: GPL-3.0-or-later
//
// rankdeck: the desktop app. `rankdeck --demo` opens the window and starts a 2-rank demo run on
// the built-in local profile; `rankdeck RUN` opens it on a run (its id, name or folder).
#include "appicon.h"
#include "mainwindow.h"
#include "screenshottour.h"
#include "util/buildversion.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QMessageBox>

#include <cstdio>

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
    parser.addPositionalArgument(
        QStringLiteral("RUN"),
        QCoreApplication::translate("main", "A run's id, name or folder: the app opens on it, "
                                            "and follows it while it runs."),
        QStringLiteral("[RUN]"));
    parser.process(app);
    if (parser.positionalArguments().size() > 1) {
        std::fprintf(stderr, "rankdeck: %s\n",
                     qPrintable(QCoreApplication::translate("main", "expected one RUN, got %1")
                                    .arg(parser.positionalArguments().size())));
        return 2;
    }

    rankdeck::MainWindow window;
    window.show();
    if (parser.isSet(screenshots)) {
        auto *tour = new rankdeck::ScreenshotTour(&window, parser.value(screenshots), &window);
        QObject::connect(tour, &rankdeck::ScreenshotTour::done, &app,
                         [](bool ok) { QCoreApplication::exit(ok ? 0 : 1); });
        tour->start();
    } else if (parser.isSet(demo)) {
        window.startDemo();
    } else if (!parser.positionalArguments().isEmpty()) {
        // As a desktop app opens the document named on its command line; a run that cannot be
        // opened is said, and the window stays (the run list is still there to pick from).
        QString error;
        if (!window.showRun(parser.positionalArguments().constFirst(), &error)) {
            std::fprintf(stderr, "rankdeck: %s\n", qPrintable(error));
            QMessageBox::warning(&window, QCoreApplication::translate("main", "Open run"), error);
        }
    }
    return QApplication::exec();
}
