// SPDX-License-Identifier: GPL-3.0-or-later
#include "plotcommand.h"

#include "cliutil.h"
#include "lossplot.h"
#include "metricsplotprovider.h"
#include "record/runrecord.h"
#include "store/metricsstore.h"

#include <qcustomplot.h>

#include <QFileInfo>

#include <memory>
#include <vector>

namespace rankdeck::cli {

namespace {

struct LoadedRun
{
    QString name;
    QString directory;
    std::unique_ptr<MetricsStore> store;
    std::unique_ptr<MetricsPlotProvider> provider;
};

} // namespace

int PlotCommand::run(const QStringList &args)
{
    QCommandLineParser parser;
    const QCommandLineOption metricOpt(QStringLiteral("metric"),
                                       CliUtil::tr("The metric to plot (default loss)."),
                                       QStringLiteral("NAME"), QStringLiteral("loss"));
    const QCommandLineOption compareOpt(
        QStringLiteral("compare"),
        CliUtil::tr("Overlay this run too (repeatable): each run's mean across its ranks in a "
                    "colour of its own (see --compare-ranks), the legend by run name."),
        QStringLiteral("RUN"));
    const QCommandLineOption compareRanksOpt(
        QStringLiteral("compare-ranks"),
        CliUtil::tr("With --compare, how each run shows its ranks: mean (its mean across ranks), "
                    "band (the mean and a min–max band across ranks; the default) or all (the "
                    "mean and a thin line per rank)."),
        QStringLiteral("HOW"), QStringLiteral("band"));
    const QCommandLineOption pngOpt(QStringLiteral("png"), CliUtil::tr("Write a PNG image."),
                                    QStringLiteral("FILE"));
    const QCommandLineOption pdfOpt(QStringLiteral("pdf"), CliUtil::tr("Write a PDF."),
                                    QStringLiteral("FILE"));
    const QCommandLineOption widthOpt(QStringLiteral("width"),
                                      CliUtil::tr("Width in pixels (default 1200)."),
                                      QStringLiteral("PX"), QStringLiteral("1200"));
    const QCommandLineOption heightOpt(QStringLiteral("height"),
                                       CliUtil::tr("Height in pixels (default 600)."),
                                       QStringLiteral("PX"), QStringLiteral("600"));
    const QCommandLineOption smoothingOpt(
        QStringLiteral("smoothing"),
        CliUtil::tr("Debiased EMA weight in [0, 1), as the Loss page's slider (default 0.6)."),
        QStringLiteral("W"), QStringLiteral("0.6"));
    const QCommandLineOption xOpt(QStringLiteral("x"),
                                  CliUtil::tr("x axis: step, relative or wall (default step)."),
                                  QStringLiteral("AXIS"), QStringLiteral("step"));
    const QCommandLineOption logOpt(QStringLiteral("log"), CliUtil::tr("Log-scale y axis."));
    parser.addOptions({metricOpt, compareOpt, compareRanksOpt, pngOpt, pdfOpt, widthOpt, heightOpt,
                       smoothingOpt, xOpt, logOpt});
    parser.addPositionalArgument(QStringLiteral("RUN"), CliUtil::tr("Run id or name."));
    int code = 0;
    if (!CliUtil::parse(parser, args,
                        CliUtil::tr("Draw a run's curves into a PNG or PDF without a display (the "
                                    "Loss page's plot, rendered offscreen)."),
                        &code))
        return code;
    const QString cmd = args.value(0);
    if (parser.positionalArguments().size() != 1)
        return CliUtil::usageError(CliUtil::tr("expected one RUN (a run id or name)"), cmd);
    if (parser.isSet(pngOpt) == parser.isSet(pdfOpt))
        return CliUtil::usageError(CliUtil::tr("give one of --png FILE or --pdf FILE"), cmd);
    int width = 0, height = 0;
    if (!CliUtil::parseInt(parser.value(widthOpt), 64, 16384, &width))
        return CliUtil::usageError(CliUtil::tr("--width: \"%1\" is not a width from 64 to 16384")
                                       .arg(parser.value(widthOpt)),
                                   cmd);
    if (!CliUtil::parseInt(parser.value(heightOpt), 64, 16384, &height))
        return CliUtil::usageError(CliUtil::tr("--height: \"%1\" is not a height from 64 to 16384")
                                       .arg(parser.value(heightOpt)),
                                   cmd);
    bool okNumber = false;
    const double smoothing = parser.value(smoothingOpt).toDouble(&okNumber);
    if (!okNumber || smoothing < 0 || smoothing >= 1)
        return CliUtil::usageError(CliUtil::tr("--smoothing: \"%1\" is not a weight in [0, 1)")
                                       .arg(parser.value(smoothingOpt)),
                                   cmd);
    PlotXMode xMode = PlotXMode::Step;
    const QString x = parser.value(xOpt);
    if (x == QLatin1String("relative"))
        xMode = PlotXMode::RelativeTime;
    else if (x == QLatin1String("wall"))
        xMode = PlotXMode::WallTime;
    else if (x != QLatin1String("step"))
        return CliUtil::usageError(CliUtil::tr("--x: \"%1\" is not step, relative or wall").arg(x),
                                   cmd);
    CompareRanks compareRanks = CompareRanks::Band;
    const QString how = parser.value(compareRanksOpt);
    if (how == QLatin1String("mean"))
        compareRanks = CompareRanks::Mean;
    else if (how == QLatin1String("all"))
        compareRanks = CompareRanks::EveryRank;
    else if (how != QLatin1String("band"))
        return CliUtil::usageError(
            CliUtil::tr("--compare-ranks: \"%1\" is not mean, band or all").arg(how), cmd);
    if (parser.isSet(compareRanksOpt) && !parser.isSet(compareOpt))
        return CliUtil::usageError(
            CliUtil::tr("--compare-ranks applies to compared runs: give --compare RUN too"), cmd);

    const QString metricName = parser.value(metricOpt);
    QStringList runs{parser.positionalArguments().constFirst()};
    runs += parser.values(compareOpt);
    std::vector<LoadedRun> loaded;
    for (const QString &run : std::as_const(runs)) {
        QString error;
        const QString dir = RunRecord::resolve(CliUtil::runsDirectory(), run, &error);
        if (dir.isEmpty()) {
            CliUtil::err() << QStringLiteral("rankdeck-cli: ") << error << '\n';
            return ExitFailed;
        }
        LoadedRun l;
        l.directory = dir;
        RunRecord record;
        l.name = record.open(dir, &error) ? record.info().name : run;
        if (l.name.isEmpty())
            l.name = QFileInfo(dir).fileName();
        l.store = std::make_unique<MetricsStore>();
        if (!CliUtil::loadRecordedMetrics(dir, l.store.get(), &error, {metricName}))
            CliUtil::err() << QStringLiteral("rankdeck-cli: ") << error << '\n'; // good rows stay
        if (l.store->ranks(metricName).isEmpty()) {
            const QStringList names = [&] {
                MetricsStore all;
                QString ignored;
                CliUtil::loadRecordedMetrics(dir, &all, &ignored);
                return all.metricNames();
            }();
            CliUtil::err() << CliUtil::tr("rankdeck-cli: run %1 has no metric \"%2\" (it has: %3)")
                                  .arg(run, metricName,
                                       names.isEmpty() ? CliUtil::tr("none") : names.join(u", "))
                           << '\n';
            return ExitFailed;
        }
        l.provider = std::make_unique<MetricsPlotProvider>(l.store.get(), metricName);
        loaded.push_back(std::move(l));
    }
    // Two runs of the same name are told apart by their ids.
    for (size_t i = 0; i < loaded.size(); ++i) {
        for (size_t j = i + 1; j < loaded.size(); ++j) {
            if (loaded[i].name == loaded[j].name)
                loaded[j].name += QStringLiteral(" (%1)").arg(runs[qsizetype(j)]);
        }
    }

    LossPlot plot;
    plot.setSmoothing(smoothing);
    plot.setXMode(xMode);
    plot.setLogScale(parser.isSet(logOpt));
    plot.customPlot()->yAxis->setLabel(metricName);
    if (loaded.size() == 1) {
        plot.setProvider(loaded.front().provider.get());
    } else {
        QList<LossPlot::ComparedRun> compared;
        for (const LoadedRun &l : loaded)
            compared.append({l.name, l.provider.get(), l.directory});
        plot.setCompareRanks(compareRanks);
        plot.setComparedRuns(compared);
    }
    const bool pdf = parser.isSet(pdfOpt);
    const QString file = parser.value(pdf ? pdfOpt : pngOpt);
    if (!plot.renderToFile(file, width, height, pdf)) {
        CliUtil::err() << CliUtil::tr("rankdeck-cli: cannot write %1").arg(file) << '\n';
        return ExitFailed;
    }
    CliUtil::err() << CliUtil::tr("%1 (%2 × %3) written").arg(file).arg(width).arg(height) << '\n';
    return ExitOk;
}

} // namespace rankdeck::cli
