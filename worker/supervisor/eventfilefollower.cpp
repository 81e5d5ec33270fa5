// SPDX-License-Identifier: GPL-3.0-or-later
#include "supervisor/eventfilefollower.h"

#include "supervisor/wallclock.h"
#include "wire/wireprotocol.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <iterator>
#include <utility>

namespace rankdeck::supervisor {

namespace {

constexpr std::string_view kPrefix = "events.out.tfevents.";

// Digits only, no sign, at most 18 of them (fits int64); false for anything else.
bool parseDigits(std::string_view s, std::int64_t *out)
{
    if (s.empty() || s.size() > 18)
        return false;
    std::int64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9')
            return false;
        v = v * 10 + (c - '0');
    }
    *out = v;
    return true;
}

bool sameTime(const timespec &a, const timespec &b)
{
    return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

std::string joinPath(const std::string &dir, std::string_view name)
{
    if (dir == ".")
        return std::string(name); // the working directory's own: "tb_logs/…", as the program
    std::string out = dir;
    if (!out.empty() && out.back() != '/')
        out += '/';
    out += name;
    return out;
}

std::int64_t monotonicUs()
{
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Directories a working directory holds that are nobody's logs: hidden ones (.git, .cache,
// .venv), Python's and Node's caches and installs.
bool skippedInWalk(std::string_view name)
{
    return name.empty() || name.front() == '.' || name == "__pycache__" || name == "node_modules" ||
           name == "site-packages" || name == "dist-packages";
}

} // namespace

EventFileFollower::EventFileFollower(Options options, PidFilter ownsPid, LineSink emit,
                                     LineSink note)
    : m_options(std::move(options)), m_ownsPid(std::move(ownsPid)), m_emit(std::move(emit)),
      m_note(std::move(note))
{}

EventFileFollower::~EventFileFollower()
{
    for (File &f : m_files) {
        if (f.fd >= 0)
            close(f.fd);
    }
}

std::string EventFileFollower::directoryFor(const std::vector<std::string> &command,
                                            const std::string &option)
{
    if (!option.empty())
        return option;
    std::string found;
    // command[0] is the program itself; its arguments follow.
    for (std::size_t i = 1; i < command.size(); ++i) {
        const std::string_view a = command[i];
        for (std::string_view flag : {"--logdir", "--log_dir", "--log-dir"}) {
            if (a == flag && i + 1 < command.size()) {
                found = command[i + 1];
            } else if (a.size() > flag.size() + 1 && a.substr(0, flag.size()) == flag &&
                       a[flag.size()] == '=') {
                found = std::string(a.substr(flag.size() + 1));
            }
        }
    }
    return found.empty() ? std::string("runs") : found;
}

bool EventFileFollower::parseFileName(std::string_view name, std::string_view host, pid_t *pid,
                                      std::int64_t *timeSec)
{
    // events.out.tfevents.<secs>.<host>.<pid>.<n>[.v2 or another suffix]; the host may hold
    // dots itself, so it is matched as the known string rather than split out.
    if (name.substr(0, kPrefix.size()) != kPrefix || host.empty())
        return false;
    std::string_view rest = name.substr(kPrefix.size());
    const std::size_t dot = rest.find('.');
    if (dot == std::string_view::npos || !parseDigits(rest.substr(0, dot), timeSec))
        return false;
    rest.remove_prefix(dot + 1);
    if (rest.size() <= host.size() || rest.substr(0, host.size()) != host ||
        rest[host.size()] != '.')
        return false;
    rest.remove_prefix(host.size() + 1);
    const std::size_t end = rest.find('.');
    std::int64_t p = 0;
    if (!parseDigits(rest.substr(0, end), &p) || p <= 0 || p > 0x3fffffff)
        return false;
    *pid = pid_t(p);
    return true;
}

bool EventFileFollower::readDirectory(const std::string &path, Directory &dir, bool force,
                                      WalkStats *stats, dev_t *device)
{
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return false;
    if (stats)
        ++stats->directories;
    if (device) {
        // Walking: another file system (a mount point) is not walked into.
        if (*device != 0 && st.st_dev != *device)
            return false;
        *device = st.st_dev;
    }
    // A directory whose mtime moved has new entries. One that changed within the last two
    // seconds is read again anyway: on a file system with coarse timestamps a second change in
    // the same tick would not move it.
    const bool recent = st.st_mtim.tv_sec + 2 >= std::int64_t(time(nullptr));
    if (!force && !recent && sameTime(st.st_mtim, dir.mtime))
        return true;
    if (stats)
        ++stats->read;
    dir.mtime = st.st_mtim;
    dir.subdirectories.clear();
    dir.environment = false;
    DIR *d = opendir(path.c_str());
    if (!d)
        return true;
    while (dirent *e = readdir(d)) {
        if (stats && ++stats->entries > kWalkEntries) {
            stats->cut = true;
            dir.mtime = {}; // read it again next time
            break;
        }
        const std::string_view name = e->d_name;
        if (name == "." || name == "..")
            continue;
        if (stats && name == "pyvenv.cfg")
            dir.environment = true;
        unsigned char type = e->d_type;
        if (type == DT_UNKNOWN) {
            struct stat es;
            if (lstat(joinPath(path, name).c_str(), &es) == 0)
                type = S_ISDIR(es.st_mode) ? DT_DIR : S_ISREG(es.st_mode) ? DT_REG : 0;
        }
        if (type == DT_DIR && !(stats && skippedInWalk(name)))
            dir.subdirectories.emplace_back(name);
        else if (type == DT_REG && name.substr(0, kPrefix.size()) == kPrefix)
            consider(joinPath(path, name), name);
    }
    closedir(d);
    return true;
}

void EventFileFollower::scan(const std::string &path, int depth, bool force,
                             std::size_t *directories)
{
    if (*directories >= kMaxDirectories)
        return;
    ++*directories;
    Directory &dir = m_directories[path];
    if (!readDirectory(path, dir, force, nullptr, nullptr)) {
        m_directories.erase(path);
        return;
    }
    if (depth >= kMaxDepth)
        return;
    // `dir` stays valid: the recursion adds and erases other paths of a std::map only.
    for (const std::string &sub : dir.subdirectories)
        scan(joinPath(path, sub), depth + 1, force, directories);
}

void EventFileFollower::walk(bool force)
{
    const std::string &root = m_options.workDirectory;
    if (root.empty())
        return;
    const std::int64_t started = monotonicUs();
    if (!force && started < m_nextWalkUs)
        return;
    if (m_walkQueue.empty()) {
        // A new pass from the top.
        m_pass = WalkStats{};
        m_passVisited.clear();
        m_passDevice = 0;
        m_walkQueue.emplace_back(root, 0);
    }
    // The followed directory is scanned on its own every poll: not twice.
    struct stat followed;
    const bool skipFollowed = stat(m_options.directory.c_str(), &followed) == 0;
    // One slice of the pass at most this long (a slow file system must not hold the
    // supervisor's loop: heartbeats, stdin); the rest next time. drain() walks it all.
    const std::int64_t budgetUs = force ? kDrainWalkUs : kWalkSliceUs;
    while (!m_walkQueue.empty()) {
        if (m_pass.directories >= kWalkDirectories || m_pass.cut) {
            m_pass.cut = true;
            m_walkQueue.clear();
            break;
        }
        if (monotonicUs() - started > budgetUs)
            break;
        auto [path, depth] = std::move(m_walkQueue.front());
        m_walkQueue.pop_front();
        Directory &dir = m_walked[path];
        m_passVisited.insert(path);
        if (!readDirectory(path, dir, force, &m_pass, &m_passDevice)) {
            m_walked.erase(path);
            continue;
        }
        if (dir.environment || depth >= kWalkDepth)
            continue;
        for (const std::string &sub : dir.subdirectories) {
            std::string child = joinPath(path, sub);
            struct stat cs;
            if (skipFollowed && depth == 0 && stat(child.c_str(), &cs) == 0 &&
                cs.st_dev == followed.st_dev && cs.st_ino == followed.st_ino)
                continue;
            m_walkQueue.emplace_back(std::move(child), depth + 1);
        }
    }
    const std::int64_t spent = monotonicUs() - started;
    m_pass.microseconds += spent;
    // The next slice waits kWalkCostFactor × this one: at most ~1% of a core on walking.
    m_nextWalkUs = started + std::max<std::int64_t>(1, spent) * kWalkCostFactor;
    if (!m_walkQueue.empty())
        return;
    // The pass is over: forget what the tree no longer holds (a whole pass only).
    if (!m_pass.cut) {
        for (auto it = m_walked.begin(); it != m_walked.end();)
            it = m_passVisited.count(it->first) ? std::next(it) : m_walked.erase(it);
    } else if (!m_walkCutNoted) {
        m_walkCutNoted = true;
        m_note("rankdeck-supervisor: rank " + std::to_string(m_options.rank) +
               ": the working directory holds more than " + std::to_string(kWalkDirectories) +
               " directories (or " + std::to_string(kWalkEntries) + " entries) within " +
               std::to_string(kWalkDepth) +
               " levels; TensorBoard event files past that are not found there (name their "
               "directory with --tensorboard-dir)\n");
    }
    m_lastWalk = m_pass;
    ++m_walks;
}

void EventFileFollower::consider(const std::string &path, std::string_view name)
{
    if (!m_seen.insert(path).second)
        return;
    // Bounded: a directory of event files of earlier runs costs one entry each.
    if (m_seen.size() > 65536)
        m_seen.clear();
    pid_t pid = 0;
    std::int64_t timeSec = 0;
    if (!parseFileName(name, m_options.host, &pid, &timeSec) || timeSec < m_options.startSec)
        return; // another node's, or written before this rank started
    if (!m_ownPids.count(pid)) {
        if (!m_ownsPid || !m_ownsPid(pid))
            return; // another rank's program (or another program) on this node
        m_ownPids.insert(pid);
    }
    if (path.size() > wire::kTfEventsMaxFileName) {
        m_note("rankdeck-supervisor: not following TensorBoard event file " + path.substr(0, 200) +
               "…: its name is longer than " + std::to_string(wire::kTfEventsMaxFileName) +
               " bytes\n");
        return;
    }
    if (m_files.size() >= kMaxFiles) {
        if (!m_tooManyNoted)
            m_note("rankdeck-supervisor: rank " + std::to_string(m_options.rank) +
                   " writes more than " + std::to_string(kMaxFiles) +
                   " TensorBoard event files; not following " + path + " and later ones\n");
        m_tooManyNoted = true;
        return;
    }
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        m_note("rankdeck-supervisor: cannot read TensorBoard event file " + path + ": " +
               std::strerror(errno) + "\n");
        return;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && !m_seenFiles.insert({st.st_dev, st.st_ino}).second) {
        close(fd); // followed already, under the other path (the walk and --tensorboard-dir)
        return;
    }
    m_files.push_back(File{path, fd, 0});
}

std::size_t EventFileFollower::readFile(File &file, std::size_t budget)
{
    struct stat st;
    if (fstat(file.fd, &st) != 0)
        return 0;
    const auto size = std::uint64_t(st.st_size);
    if (size < file.offset) {
        // Shrunk under us: what follows is read from the new end, and the launcher learns of
        // it from this empty chunk (its reader starts afresh there).
        file.offset = size;
        m_emit(wire::WireEventWriter(wire::event::TfEvents, m_options.rank, wallUs())
                   .addString(wire::field::File, file.path)
                   .addInt(wire::field::Offset, std::int64_t(file.offset))
                   .addBase64(wire::field::Data, {})
                   .line());
    }
    std::size_t done = 0;
    char buf[wire::kTfEventsChunkBytes];
    while (file.offset < size && done < budget) {
        const std::size_t want = std::size_t(std::min<std::uint64_t>(
            {size - file.offset, sizeof buf, std::uint64_t(budget - done)}));
        const ssize_t n = pread(file.fd, buf, want, off_t(file.offset));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        m_emit(wire::WireEventWriter(wire::event::TfEvents, m_options.rank, wallUs())
                   .addString(wire::field::File, file.path)
                   .addInt(wire::field::Offset, std::int64_t(file.offset))
                   .addBase64(wire::field::Data, std::string_view(buf, std::size_t(n)))
                   .line());
        file.offset += std::uint64_t(n);
        done += std::size_t(n);
    }
    return done;
}

std::size_t EventFileFollower::poll()
{
    std::size_t directories = 0;
    scan(m_options.directory, 0, false, &directories);
    walk(false);
    std::size_t done = 0;
    // Round robin: a file that grows fast cannot keep the others waiting.
    for (std::size_t i = 0; i < m_files.size() && done < kMaxBytesPerPoll; ++i) {
        File &f = m_files[(m_next + i) % m_files.size()];
        done += readFile(f, kMaxBytesPerPoll - done);
    }
    if (!m_files.empty())
        m_next = (m_next + 1) % m_files.size();
    return done;
}

std::size_t EventFileFollower::drain(std::size_t maxBytes)
{
    std::size_t directories = 0;
    scan(m_options.directory, 0, true, &directories);
    walk(true);
    std::size_t done = 0;
    for (File &f : m_files) {
        if (done >= maxBytes)
            break;
        done += readFile(f, maxBytes - done);
    }
    return done;
}

} // namespace rankdeck::supervisor
