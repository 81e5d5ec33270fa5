// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/loglinegroups.h"

#include <algorithm>

namespace rankdeck {

namespace {
int streamIndex(StreamKind stream)
{
    return stream == StreamKind::Stderr ? 1 : 0;
}
} // namespace

LogLineGroups::LogLineGroups() = default;

LogLineGroups::LogLineGroups(const Options &options) : m_options(options) {}

void LogLineGroups::setOptions(const Options &options)
{
    m_options = options;
    prune();
}

LogLineGroups::Member LogLineGroups::memberOf(const LogLine &line)
{
    Member m;
    m.timeUs = line.timeUs;
    m.sequence = line.sequence;
    m.number = line.number;
    m.byteLength = line.byteLength;
    m.rank = line.rank;
    m.truncated = line.truncated;
    return m;
}

int LogLineGroups::joinableGroup(const LogLine &line) const
{
    if (m_options.maxDistance <= 0)
        return -1;
    const auto it = m_open[streamIndex(line.stream)].constFind(line.text);
    if (it == m_open[streamIndex(line.stream)].cend())
        return -1;
    const qint64 oldest = qMax(m_firstSerial, m_nextSerial - m_options.maxDistance);
    const OpenEntries &open = it.value();
    for (int i = 0; i < open.count; ++i) {
        const qint64 serial = open.serials[i];
        if (serial < oldest)
            continue;
        const int index = int(serial - m_firstSerial);
        const Group &g = m_groups.at(index);
        const Member &first = g.first();
        if (line.timeUs - first.timeUs > m_options.windowUs)
            continue;
        if ((line.truncated || first.truncated) &&
            (line.truncated != first.truncated || line.byteLength != first.byteLength))
            continue;
        if (g.hasRank(line.rank))
            continue;
        return index;
    }
    return -1;
}

void LogLineGroups::join(int index, const LogLine &line)
{
    Group &g = m_groups[index];
    if (g.ranks.empty())
        g.ranks.push_back(g.first().rank);
    g.members.append(memberOf(line));
    g.ranks.insert(std::lower_bound(g.ranks.begin(), g.ranks.end(), line.rank), line.rank);
    ++m_joined;
}

int LogLineGroups::append(const LogLine &line)
{
    Group g;
    g.text = line.text;
    g.stream = line.stream;
    g.members.append(memberOf(line));
    m_groups.append(std::move(g));
    const qint64 serial = m_nextSerial++;
    if (m_options.maxDistance > 0) {
        // A repeat of a rank already in the older groups (or a line past their window)
        // collects its peers here.
        m_open[streamIndex(line.stream)][line.text].push(serial);
        m_recent.push_back({serial, line.text, streamIndex(line.stream)});
        prune();
    }
    return int(m_groups.size()) - 1;
}

int LogLineGroups::add(const LogLine &line)
{
    const int index = joinableGroup(line);
    if (index >= 0) {
        join(index, line);
        return index;
    }
    return append(line);
}

void LogLineGroups::OpenEntries::push(qint64 serial)
{
    if (count == kMaxOpenPerText)
        removeFirst();
    serials[count++] = serial;
}

void LogLineGroups::OpenEntries::removeFirst()
{
    std::copy(serials + 1, serials + count, serials);
    --count;
}

void LogLineGroups::prune()
{
    const qint64 oldest = m_nextSerial - qMax(0, m_options.maxDistance);
    while (!m_recent.empty() && m_recent.front().serial < oldest) {
        const Recent &r = m_recent.front();
        const auto it = m_open[r.stream].find(r.text);
        if (it != m_open[r.stream].end()) {
            // The oldest serial first, unless kMaxOpenPerText dropped it already.
            OpenEntries &open = it.value();
            if (open.count > 0 && open.serials[0] == r.serial)
                open.removeFirst();
            if (open.count == 0)
                m_open[r.stream].remove(r.text);
        }
        m_recent.pop_front();
    }
}

LogLineGroups LogLineGroups::grouped(const QList<LogLine> &lines) const
{
    LogLineGroups out(m_options);
    for (const LogLine &line : lines)
        out.add(line);
    return out;
}

int LogLineGroups::prepend(LogLineGroups &&front)
{
    const int count = front.size();
    if (count == 0)
        return 0;
    front.m_groups.append(std::move(m_groups));
    m_groups = std::move(front.m_groups);
    m_firstSerial -= count;
    m_joined += front.m_joined;
    return count;
}

void LogLineGroups::removeFirst(int count)
{
    count = qBound(0, count, size());
    if (count == 0)
        return;
    m_groups.remove(0, count);
    m_firstSerial += count;
    // The hash may still name removed entries: joinableGroup() checks m_firstSerial, and prune()
    // drops them in time.
}

int LogLineGroups::countFirstBefore(qint64 sequence) const
{
    // Entries are in the order of their first lines.
    const auto it =
        std::partition_point(m_groups.cbegin(), m_groups.cend(),
                             [sequence](const Group &g) { return g.first().sequence < sequence; });
    return int(it - m_groups.cbegin());
}

void LogLineGroups::clear()
{
    m_groups.clear();
    m_open[0].clear();
    m_open[1].clear();
    m_recent.clear();
    m_firstSerial = 0;
    m_nextSerial = 0;
}

QString LogLineGroups::rankRanges(const std::vector<int> &sortedRanks, int maxRanges)
{
    QString out;
    int runs = 0;
    for (size_t i = 0; i < sortedRanks.size();) {
        size_t j = i;
        while (j + 1 < sortedRanks.size() && sortedRanks[j + 1] == sortedRanks[j] + 1)
            ++j;
        if (runs == maxRanges) {
            out += QStringLiteral(",…");
            break;
        }
        if (runs > 0)
            out += QLatin1Char(',');
        out += QString::number(sortedRanks[i]);
        if (j > i)
            out += QChar(0x2013) + QString::number(sortedRanks[j]); // en dash
        ++runs;
        i = j + 1;
    }
    return QLatin1Char('r') + out;
}

} // namespace rankdeck
