// SPDX-License-Identifier: GPL-3.0-or-later
#include "supervisor/pythonstackdumper.h"

#include "supervisor/processtree.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>
#include <vector>

namespace rankdeck::supervisor {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kMaxWait = std::chrono::milliseconds(1000);
// faulthandler writes a dump in one go; this long without growth means it is done.
constexpr auto kQuiet = std::chrono::milliseconds(60);
constexpr size_t kMaxDump = 48 * 1024;

std::string readFile(const std::string &path, off_t from, size_t limit)
{
    std::string s;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return s;
    if (from > 0 && ::lseek(fd, from, SEEK_SET) != from) {
        ::close(fd);
        return s;
    }
    char buf[8192];
    ssize_t n;
    while (s.size() < limit && (n = ::read(fd, buf, sizeof buf)) > 0)
        s.append(buf, size_t(n));
    ::close(fd);
    if (s.size() > limit)
        s.resize(limit);
    return s;
}

off_t fileSize(const std::string &path)
{
    struct stat st
    {
    };
    return ::stat(path.c_str(), &st) == 0 ? st.st_size : 0;
}

bool catchesSignal(pid_t pid, int sig)
{
    const std::string status = readFile("/proc/" + std::to_string(pid) + "/status", 0, 65536);
    const size_t pos = status.find("SigCgt:");
    if (pos == std::string::npos)
        return false;
    const unsigned long long mask = std::strtoull(status.c_str() + pos + 7, nullptr, 16);
    return (mask >> (sig - 1)) & 1ull;
}

} // namespace

void PythonStackDumper::prepare(const std::string &runDirectory, int rank)
{
    m_signal = SIGRTMIN + 6;
    const std::string base = runDirectory + "/python-stacks-rank" + std::to_string(rank);
    m_stacksPath = base + ".txt";
    m_readyPath = base + ".ready";
    ::unlink(m_stacksPath.c_str());
    ::unlink(m_readyPath.c_str());
    setenv("RANKDECK_PYTHON_STACKS_SIGNAL", std::to_string(m_signal).c_str(), 1);
    setenv("RANKDECK_PYTHON_STACKS_FILE", m_stacksPath.c_str(), 1);
    setenv("RANKDECK_PYTHON_STACKS_READY", m_readyPath.c_str(), 1);
}

std::vector<pid_t> PythonStackDumper::registeredPids() const
{
    std::vector<pid_t> pids;
    if (m_readyPath.empty())
        return pids;
    std::stringstream lines(readFile(m_readyPath, 0, 65536));
    long pid = 0, sig = 0;
    while (lines >> pid >> sig)
        if (pid > 0 && sig == m_signal)
            pids.push_back(pid_t(pid));
    return pids;
}

bool PythonStackDumper::registered(pid_t pid) const
{
    const std::vector<pid_t> pids = registeredPids();
    return pid > 0 && std::find(pids.begin(), pids.end(), pid) != pids.end();
}

pid_t PythonStackDumper::registeredProcess(pid_t program) const
{
    if (program <= 0)
        return 0;
    const std::vector<pid_t> registered = registeredPids();
    if (registered.empty())
        return 0;
    pid_t chosen = 0;
    if (std::find(registered.begin(), registered.end(), program) != registered.end()) {
        chosen = program;
    } else {
        const std::vector<pid_t> tree = descendantsOf(::getpid());
        for (pid_t p : registered) {
            if (std::find(tree.begin(), tree.end(), p) != tree.end()) {
                chosen = p;
                break;
            }
        }
    }
    return chosen > 0 && catchesSignal(chosen, m_signal) ? chosen : 0;
}

std::string PythonStackDumper::dump(pid_t pid, const std::function<void()> &pump,
                                    const std::function<bool()> &gone) const
{
    const off_t before = fileSize(m_stacksPath);
    if (pid <= 0 || ::kill(pid, m_signal) != 0)
        return {};
    const auto start = Clock::now();
    off_t last = before;
    auto lastGrowth = start;
    while (Clock::now() - start < kMaxWait) {
        pump();
        const off_t now = fileSize(m_stacksPath);
        if (now != last) {
            last = now;
            lastGrowth = Clock::now();
        } else if (last > before && Clock::now() - lastGrowth >= kQuiet) {
            break;
        }
        if (gone())
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return last > before ? readFile(m_stacksPath, before, kMaxDump) : std::string();
}

} // namespace rankdeck::supervisor
