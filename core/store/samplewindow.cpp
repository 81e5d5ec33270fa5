// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/samplewindow.h"

#include "stream/workerevent.h"
#include "wire/wireprotocol.h"

#include <QJsonArray>
#include <QStringList>

#include <algorithm>
#include <cmath>

namespace rankdeck {
namespace {

QString key(std::string_view name)
{
    return QString::fromLatin1(name.data(), qsizetype(name.size()));
}

// Bounds what a hostile or broken stream can make us keep.
constexpr int kMaxCategories = 16;
constexpr int kMaxFrames = 32;

SampledPart readPart(const WorkerEvent &e, std::string_view count, std::string_view categories,
                     std::string_view frames)
{
    SampledPart part;
    part.samples = int(std::clamp<qint64>(e.integer(count), 0, 1000000));
    const QJsonObject cats = e.fields().value(key(categories)).toObject();
    for (auto it = cats.constBegin();
         it != cats.constEnd() && part.categories.size() < kMaxCategories; ++it)
        if (const int n = it.value().toInt(); n > 0)
            part.categories.insert(it.key().left(32), n);
    const QJsonArray top = e.fields().value(key(frames)).toArray();
    for (const auto &v : top) {
        if (part.frames.size() >= kMaxFrames)
            break;
        // "count TAB category TAB frame"
        const QStringList f = v.toString().split(QLatin1Char('\t'));
        if (f.size() != 3 || f[0].toInt() <= 0)
            continue;
        part.frames.append({f[2].left(300), f[1].left(32), f[0].toInt()});
    }
    return part;
}

} // namespace

void SampledPart::add(const SampledPart &other)
{
    samples += other.samples;
    for (auto it = other.categories.cbegin(); it != other.categories.cend(); ++it)
        categories[it.key()] += it.value();
    for (const SampledFrame &f : other.frames) {
        auto same = std::find_if(frames.begin(), frames.end(), [&](const SampledFrame &g) {
            return g.frame == f.frame && g.category == f.category;
        });
        if (same == frames.end())
            frames.append(f);
        else
            same->count += f.count;
    }
    std::stable_sort(
        frames.begin(), frames.end(),
        [](const SampledFrame &a, const SampledFrame &b) { return a.count > b.count; });
}

SampleWindow SampleWindow::fromEvent(const WorkerEvent &e)
{
    namespace f = wire::field;
    SampleWindow w;
    w.timeUs = e.timeUs();
    w.windowMs = int(std::clamp<qint64>(e.integer(f::WindowMs), 0, 3600000));
    w.hz = std::clamp(e.number(f::SampleRate, 0), 0.0, 1000.0);
    w.main = readPart(e, f::SampleCount, f::Categories, f::TopFrames);
    w.others = readPart(e, f::WorkerSampleCount, f::WorkerCategories, f::WorkerTopFrames);
    auto share = [&](std::string_view name, double most) {
        const double v = e.number(name, 0);
        return std::isfinite(v) ? std::clamp(v, 0.0, most) : 0.0;
    };
    w.proc.cpuShare = share(f::CpuShare, 1);
    w.proc.runQueueShare = share(f::RunQueueShare, 1);
    w.proc.processCpu = share(f::ProcessCpu, 4096);
    w.proc.othersCpu = share(f::WorkerCpu, 4096);
    w.proc.othersRunQueue = share(f::WorkerRunQueue, 4096);
    w.proc.blockIoShare = share(f::BlockIoShare, 1);
    w.proc.readBytesPerSec = share(f::ReadBytesPerSec, 1e15);
    w.proc.majorFaultsPerSec = share(f::MajorFaultsPerSec, 1e9);
    w.proc.throttledShare = share(f::ThrottledShare, 1);
    w.involuntarySwitchesPerSec = share(f::InvoluntarySwitchesPerSec, 1e9);
    w.rssBytes = std::max<qint64>(0, e.integer(f::RssBytes));
    w.samplerCpuNs = std::max<qint64>(0, e.integer(f::SamplerCpuNs));
    return w;
}

} // namespace rankdeck
