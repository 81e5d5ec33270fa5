// SPDX-License-Identifier: GPL-3.0-or-later
#include "supervisor/stacksampler.h"

#include "supervisor/processtree.h"
#include "supervisor/wallclock.h"
#include "wire/wireprotocol.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <vector>

namespace rankdeck::supervisor {
namespace {

// A profile's stack longer than this loses its outermost frames: each chunk event must stay
// one atomic write below PIPE_BUF.
constexpr std::size_t kMaxProfileStack = 2000;
constexpr std::size_t kProfileChunk = 2400;

std::vector<std::string> topFrames(const std::map<std::string, int> &frames)
{
    std::vector<std::pair<int, std::string>> sorted;
    for (const auto &[key, count] : frames)
        sorted.emplace_back(count, key);
    std::sort(sorted.begin(), sorted.end(),
              [](const auto &a, const auto &b) { return a.first > b.first; });
    std::vector<std::string> out;
    for (std::size_t i = 0; i < sorted.size() && i < wire::kSampleTopFrames; ++i) {
        std::string frame = sorted[i].second;
        if (frame.size() > 300)
            frame.resize(300);
        out.push_back(std::to_string(sorted[i].first) + '\t' + frame);
    }
    return out;
}

} // namespace

void StackSampler::prepare(int rank, Write write)
{
    m_rank = rank;
    m_write = std::move(write);
    const char *hz = std::getenv("RANKDECK_SAMPLE_HZ");
    m_hz = hz && *hz ? std::strtod(hz, nullptr) : 20.0;
    if (!(m_hz > 0)) {
        ::unsetenv("RANKDECK_SAMPLES_FD");
        m_hz = 0;
        return;
    }
    m_hz = std::min(m_hz, 200.0);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
        ::unsetenv("RANKDECK_SAMPLES_FD");
        return;
    }
    m_readFd = fds[0];
    m_writeFd = fds[1];
    // The program and its children inherit the write end (and keep it across exec: a shell
    // wrapper's Python samples too).
    fcntl(m_writeFd, F_SETFD, 0);
    ::setenv("RANKDECK_SAMPLES_FD", std::to_string(m_writeFd).c_str(), 1);
    ::setenv("RANKDECK_SAMPLE_HZ", std::to_string(m_hz).c_str(), 1);
    m_windowStart = Clock::now();
}

void StackSampler::programStarted()
{
    if (m_writeFd >= 0) {
        close(m_writeFd);
        m_writeFd = -1;
    }
}

bool StackSampler::parseLine(std::string_view line, SampleLine *out)
{
    std::vector<std::string_view> f;
    while (f.size() < 4) {
        const std::size_t tab = line.find('\t');
        if (tab == std::string_view::npos)
            break;
        f.push_back(line.substr(0, tab));
        line.remove_prefix(tab + 1);
    }
    f.push_back(line);
    auto number = [](std::string_view s, std::int64_t *v) {
        const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
        return ec == std::errc() && p == s.data() + s.size();
    };
    std::int64_t pid = 0;
    if (f.size() < 3 || !number(f[0], &pid) || pid <= 0)
        return false;
    out->pid = pid_t(pid);
    if (f.size() == 3 && f[1] == "cpu") {
        std::int64_t ns = 0;
        if (!number(f[2], &ns) || ns < 0)
            return false;
        out->samplerNs = ns;
        return true;
    }
    std::int64_t count = 0, user = 0;
    if (f.size() != 5 || !number(f[1], &count) || count <= 0 || count > 100000 ||
        !number(f[3], &user) || f[2].empty() || f[4].empty())
        return false;
    out->count = int(count);
    out->category = std::string(f[2].substr(0, 32));
    out->stack = std::string(f[4]);
    out->samplerNs = -1;
    // The frame the words name: the program's own innermost one, else the innermost.
    std::vector<std::string_view> frames;
    for (std::string_view rest = f[4];;) {
        const std::size_t semi = rest.find(';');
        frames.push_back(rest.substr(0, semi));
        if (semi == std::string_view::npos)
            break;
        rest.remove_prefix(semi + 1);
    }
    const std::size_t index =
        user >= 0 && std::size_t(user) < frames.size() ? std::size_t(user) : frames.size() - 1;
    out->frame = std::string(frames[index]);
    return true;
}

void StackSampler::onReadable()
{
    char buf[65536];
    for (;;) {
        const ssize_t n = read(m_readFd, buf, sizeof buf);
        if (n > 0) {
            m_buffer.append(buf, std::size_t(n));
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0) { // every writer is gone: the program ended
            close(m_readFd);
            m_readFd = -1;
        }
        break;
    }
    std::size_t start = 0;
    for (std::size_t nl; (nl = m_buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
        SampleLine line;
        if (parseLine(std::string_view(m_buffer).substr(start, nl - start), &line))
            take(line);
    }
    m_buffer.erase(0, start);
    if (m_buffer.size() > 65536) // no newline in 64 KiB: not the hook's
        m_buffer.clear();
}

void StackSampler::take(const SampleLine &line)
{
    if (m_mainPid == 0 || (line.pid != m_mainPid && kill(m_mainPid, 0) != 0 && errno == ESRCH))
        m_mainPid = line.pid;
    if (line.samplerNs >= 0) {
        auto [it, inserted] = m_samplerNs.try_emplace(line.pid, line.samplerNs);
        if (!inserted) {
            m_samplerNsWindow += std::max<std::int64_t>(0, line.samplerNs - it->second);
            it->second = line.samplerNs;
        } else {
            m_samplerNsWindow += line.samplerNs;
        }
        return;
    }
    Part &part = line.pid == m_mainPid ? m_main : m_others;
    part.samples += line.count;
    part.categories[line.category] += line.count;
    part.frames[line.category + '\t' + line.frame] += line.count;
    if (m_profiling) {
        std::string stack = line.stack;
        if (line.pid != m_mainPid)
            stack = "process " + std::to_string(line.pid) + ';' + stack;
        while (stack.size() > kMaxProfileStack) {
            const std::size_t semi = stack.find(';');
            if (semi == std::string::npos) {
                stack.resize(kMaxProfileStack);
                break;
            }
            stack.erase(0, semi + 1);
        }
        m_profile[stack] += line.count;
        m_profileSamples += line.count;
    }
}

int StackSampler::timeoutMs() const
{
    if (m_hz <= 0)
        return -1;
    const auto now = Clock::now();
    auto due = m_windowStart + std::chrono::milliseconds(wire::kSampleWindowMs);
    if (m_profiling)
        due = std::min(due, m_profileEnd);
    return int(std::max<std::int64_t>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(due - now).count() + 1));
}

void StackSampler::poll(pid_t program)
{
    if (m_hz <= 0)
        return;
    const auto now = Clock::now();
    if (m_profiling && now >= m_profileEnd)
        sendProfile({});
    if (now < m_windowStart + std::chrono::milliseconds(wire::kSampleWindowMs))
        return;
    sendWindow(program);
}

void StackSampler::sendWindow(pid_t program)
{
    const auto now = Clock::now();
    const pid_t main = m_mainPid > 0 && kill(m_mainPid, 0) == 0 ? m_mainPid : program;
    std::vector<pid_t> others;
    if (program > 0) {
        others = descendantsOf(program);
        if (main != program)
            others.push_back(program);
        others.erase(std::remove(others.begin(), others.end(), main), others.end());
    }
    const ProcessCounters counters = ProcessStats::read(main, others);
    const ProcessRates r = ProcessStats::rates(m_counters, counters);
    const bool first = !m_counters.valid;
    m_counters = counters;
    const std::int64_t windowMs =
        std::chrono::duration_cast<std::chrono::milliseconds>(now - m_windowStart).count();
    m_windowStart = now;
    if (first || (m_main.samples == 0 && m_others.samples == 0 && !counters.valid)) {
        m_main = {};
        m_others = {};
        m_samplerNsWindow = 0;
        return; // nothing to compare yet
    }
    wire::WireEventWriter e(wire::event::Samples, m_rank, wallUs());
    e.addInt(wire::field::WindowMs, windowMs);
    e.addDouble(wire::field::SampleRate, m_hz);
    e.addInt(wire::field::SampleCount, m_main.samples);
    e.addDoubles(wire::field::Categories, m_main.categories);
    e.addStrings(wire::field::TopFrames, topFrames(m_main.frames));
    if (m_others.samples > 0) {
        e.addInt(wire::field::WorkerSampleCount, m_others.samples);
        e.addDoubles(wire::field::WorkerCategories, m_others.categories);
        e.addStrings(wire::field::WorkerTopFrames, topFrames(m_others.frames));
    }
    e.addDouble(wire::field::CpuShare, r.cpuShare);
    e.addDouble(wire::field::RunQueueShare, r.runQueueShare);
    e.addDouble(wire::field::ProcessCpu, r.processCpu);
    e.addDouble(wire::field::WorkerCpu, r.othersCpu);
    e.addDouble(wire::field::WorkerRunQueue, r.othersRunQueue);
    e.addDouble(wire::field::BlockIoShare, r.blockIoShare);
    e.addDouble(wire::field::ReadBytesPerSec, r.readBytesPerSec);
    e.addDouble(wire::field::MajorFaultsPerSec, r.majorFaultsPerSec);
    e.addInt(wire::field::RssBytes, r.rssBytes);
    e.addDouble(wire::field::ThrottledShare, r.throttledShare);
    e.addDouble(wire::field::InvoluntarySwitchesPerSec, r.involuntarySwitchesPerSec);
    e.addInt(wire::field::SamplerCpuNs, m_samplerNsWindow);
    m_main = {};
    m_others = {};
    m_samplerNsWindow = 0;
    m_write(e.line());
}

void StackSampler::requestProfile(std::int64_t id, int seconds)
{
    if (m_profiling || m_hz <= 0 || m_readFd < 0) {
        wire::WireEventWriter end(wire::event::Profile, m_rank, wallUs());
        end.addInt(wire::field::Id, id).addBool(wire::field::End, true);
        end.addInt(wire::field::SampleCount, 0);
        end.addString(wire::field::Message, m_profiling ? "a profile is being recorded already"
                                            : m_hz <= 0 ? "sampling is off (RANKDECK_SAMPLE_HZ=0)"
                                                        : "the program has ended");
        m_write(end.line());
        return;
    }
    m_profiling = true;
    m_profileId = id;
    m_profileEnd = Clock::now() + std::chrono::seconds(seconds);
    m_profile.clear();
    m_profileSamples = 0;
}

void StackSampler::finish()
{
    if (m_readFd >= 0)
        onReadable();
    if (m_profiling)
        sendProfile("the program ended before the profile's time was up");
}

void StackSampler::sendProfile(const std::string &why)
{
    m_profiling = false;
    std::string text;
    std::int64_t offset = 0;
    auto flush = [&] {
        if (text.empty())
            return;
        wire::WireEventWriter chunk(wire::event::Profile, m_rank, wallUs());
        chunk.addInt(wire::field::Id, m_profileId).addInt(wire::field::Offset, offset);
        chunk.addString(wire::field::Data, text);
        m_write(chunk.line());
        offset += std::int64_t(text.size());
        text.clear();
    };
    for (const auto &[stack, count] : m_profile) {
        std::string line = stack + ' ' + std::to_string(count) + '\n';
        if (text.size() + line.size() > kProfileChunk)
            flush();
        text += line;
    }
    flush();
    wire::WireEventWriter end(wire::event::Profile, m_rank, wallUs());
    end.addInt(wire::field::Id, m_profileId).addBool(wire::field::End, true);
    end.addInt(wire::field::SampleCount, m_profileSamples);
    if (m_profileSamples == 0 && why.empty())
        end.addString(wire::field::Message, "no Python stack was sampled (not a Python program?)");
    else if (!why.empty())
        end.addString(wire::field::Message, why);
    m_write(end.line());
    m_profile.clear();
}

} // namespace rankdeck::supervisor
