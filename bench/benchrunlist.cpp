// SPDX-License-Identifier: GPL-3.0-or-later
//
// bench_runlist: the app's start on a runs folder of many records (issue 44, "A thousand runs";
// bench/runs1000.py fills the folder and times this program from its spawn). The real MainWindow
// opens offscreen on $XDG_DATA_HOME/rankdeck/runs, as `rankdeck` does, and this prints
//   "shown MS"  once the window is up and its run list fills its screen with runs (or holds
//               every run, when fewer fit): what a person sees first;
//   "all MS"    once the list holds --expect N runs (each run, for the filter and the sort);
// MS counted from main(). Then one JSON line {"results": {}, "detail": "..."}; the key itself
// (runs1000_gui_start_s) is the spawn-to-"shown" time the driver measures, so that the process's
// own start (loading Qt, the platform plugin) counts too.
#include "mainwindow.h"
#include "sidepanel.h"

#include <QAbstractItemModel>
#include <QApplication>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTimer>
#include <QTreeView>

#include <cstdio>

int main(int argc, char **argv)
{
    QElapsedTimer clock;
    clock.start();
    QApplication app(argc, argv);
    const QStringList args = QCoreApplication::arguments();
    const int expectAt = int(args.indexOf(QStringLiteral("--expect")));
    const int expected = expectAt > 0 ? args.value(expectAt + 1).toInt() : 1000;
    const int timeoutMs = 60'000;

    rankdeck::MainWindow window;
    window.resize(1280, 800);
    window.show();
    QTreeView *list = window.sidePanel()->runList();
    qint64 shownMs = -1, allMs = -1;
    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, &app, [&] {
        const QAbstractItemModel *model = list->model();
        const int rows = model ? model->rowCount() : 0;
        if (shownMs < 0 && rows > 0 && window.isVisible()) {
            // The screen is full when a row sits at the viewport's bottom edge.
            const QModelIndex bottom = list->indexAt(QPoint(4, list->viewport()->height() - 2));
            if (bottom.isValid() || rows >= expected) {
                shownMs = clock.elapsed();
                std::printf("shown %lld\n", static_cast<long long>(shownMs));
                std::fflush(stdout);
            }
        }
        if (shownMs >= 0 && rows >= expected) {
            allMs = clock.elapsed();
            std::printf("all %lld\n", static_cast<long long>(allMs));
            std::fflush(stdout);
            QCoreApplication::quit();
        }
        if (clock.elapsed() > timeoutMs)
            QCoreApplication::quit();
    });
    poll.start(5);
    QApplication::exec();

    QJsonObject out;
    out[QStringLiteral("results")] = QJsonObject();
    out[QStringLiteral("detail")] =
        allMs < 0 ? QStringLiteral("not measured: the run list held %1 of %2 runs after %3 s")
                        .arg(list->model() ? list->model()->rowCount() : 0)
                        .arg(expected)
                        .arg(timeoutMs / 1000)
                  : QStringLiteral("first screen of runs at %1 ms, all %2 runs at %3 ms "
                                   "(from main())")
                        .arg(shownMs)
                        .arg(expected)
                        .arg(allMs);
    std::printf("%s\n", QJsonDocument(out).toJson(QJsonDocument::Compact).constData());
    return allMs < 0 ? 1 : 0;
}
