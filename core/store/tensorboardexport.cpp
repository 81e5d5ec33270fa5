// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/tensorboardexport.h"

#include "store/metricsstore.h"
#include "tensorboard/tfrecord.h"
#include "util/translation.h"

#include <tensorboard.pb.h>

#include <QDir>
#include <QSaveFile>

#include <algorithm>
#include <string>
#include <vector>

namespace rankdeck {

namespace {

struct Point
{
    int segment;
    qint64 step;
    qint64 timeUs;
    int metric;
    double value;
};

QByteArray serialized(const ::tensorboard::Event &event)
{
    std::string bytes;
    event.SerializeToString(&bytes);
    return tensorboard::TfRecord::frame(QByteArray(bytes.data(), qsizetype(bytes.size())));
}

// A host name as it may stand in a file name.
QString fileNamePart(QString host)
{
    for (QChar &c : host) {
        if (!c.isLetterOrNumber() && c != u'-' && c != u'_')
            c = u'_';
    }
    return host.isEmpty() ? QStringLiteral("rankdeck") : host;
}

} // namespace

bool TensorBoardExport::write(const MetricsStore &store, const QString &directory,
                              const QHash<int, QString> &hosts, Result *result,
                              QString *errorMessage)
{
    auto fail = [&](const QString &why) {
        if (errorMessage)
            *errorMessage = why;
        return false;
    };
    Result r;
    const QStringList names = store.metricNames();
    const QList<int> ranks = store.ranks();
    const QDir root(directory);
    for (int rank : ranks) {
        const QString sub = QStringLiteral("rank-%1").arg(rank);
        const QDir dir(root.filePath(sub));
        if (dir.exists() && !dir.entryList({QStringLiteral("*tfevents*")}, QDir::Files).isEmpty())
            return fail(tr("%1 already holds TensorBoard event files; export into an empty "
                           "directory (TensorBoard would show both exports as one run)")
                            .arg(dir.path()));
    }
    for (int rank : ranks) {
        std::vector<Point> points;
        for (int m = 0; m < names.size(); ++m) {
            const QList<MetricSegment> segments = store.segments(rank, names[m]);
            for (int s = 0; s < segments.size(); ++s) {
                for (const MetricPoint &p : segments[s].points)
                    points.push_back(Point{s, p.step, p.wallTimeUs, m, p.value});
            }
        }
        if (points.empty())
            continue;
        std::stable_sort(points.begin(), points.end(), [](const Point &a, const Point &b) {
            return a.segment != b.segment ? a.segment < b.segment : a.step < b.step;
        });
        const QString sub = QStringLiteral("rank-%1").arg(rank);
        if (!root.mkpath(sub))
            return fail(tr("cannot create directory %1").arg(root.filePath(sub)));
        const qint64 firstUs =
            std::min_element(points.begin(), points.end(), [](const Point &a, const Point &b) {
                return a.timeUs < b.timeUs;
            })->timeUs;
        const QString fileName =
            root.filePath(sub + QStringLiteral("/events.out.tfevents.%1.%2.rankdeck")
                                    .arg(firstUs / 1000000)
                                    .arg(fileNamePart(hosts.value(rank))));
        QSaveFile file(fileName);
        if (!file.open(QIODevice::WriteOnly))
            return fail(tr("cannot write %1: %2").arg(fileName, file.errorString()));
        ::tensorboard::Event header;
        header.set_wall_time(double(firstUs) / 1e6);
        header.set_file_version("brain.Event:2");
        QByteArray out = serialized(header);
        std::vector<std::string> tags;
        for (const QString &n : names)
            tags.push_back(n.toStdString());
        // Metrics of one step event (same step and time) share one Event, as a worker sent them.
        for (size_t i = 0; i < points.size();) {
            if (i > 0 && points[i].segment != points[i - 1].segment) {
                ::tensorboard::Event restart;
                restart.set_wall_time(double(points[i].timeUs) / 1e6);
                restart.set_step(points[i].step);
                restart.mutable_session_log()->set_status(::tensorboard::SessionLog::START);
                out += serialized(restart);
            }
            ::tensorboard::Event event;
            event.set_wall_time(double(points[i].timeUs) / 1e6);
            event.set_step(points[i].step);
            ::tensorboard::Summary *summary = event.mutable_summary();
            size_t j = i;
            for (; j < points.size() && points[j].segment == points[i].segment &&
                   points[j].step == points[i].step && points[j].timeUs == points[i].timeUs;
                 ++j) {
                ::tensorboard::Summary::Value *v = summary->add_value();
                v->set_tag(tags[size_t(points[j].metric)]);
                v->set_simple_value(float(points[j].value));
            }
            r.points += qint64(j - i);
            i = j;
            out += serialized(event);
            if (out.size() > (1 << 20)) {
                if (file.write(out) != out.size())
                    return fail(tr("cannot write %1: %2").arg(fileName, file.errorString()));
                out.clear();
            }
        }
        if (file.write(out) != out.size() || !file.commit())
            return fail(tr("cannot write %1: %2").arg(fileName, file.errorString()));
        ++r.ranks;
        r.files << fileName;
    }
    if (result)
        *result = r;
    return true;
}

} // namespace rankdeck
