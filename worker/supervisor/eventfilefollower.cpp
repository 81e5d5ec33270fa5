// SPDX-License-Identifier: GPL-3.0-or-later
#include "supervisor/eventfilefollower.h"

#include "wire/wireprotocol.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

namespace rankdeck::supervisor {

namespace {

constexpr std::string_view kPrefix = "events.out.tfevents.";

std::int64_t wallUs()
{
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

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
    std::string out = dir;
    if (!out.empty() && out.back() != '/')
        out += '/';
    out += name;
    return out;
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

void EventFileFollower::scan(const std::string &path, int depth, bool force,
                             std::size_t *directories)
{
    if (*directories >= kMaxDirectories)
        return;
    ++*directories;
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        m_directories.erase(path);
        return;
    }
    Directory &dir = m_directories[path];
    // A directory whose mtime moved has new entries. One that changed within the last two
    // seconds is read again anyway: on a file system with coarse timestamps a second change in
    // the same tick would not move it.
    const bool recent = st.st_mtim.tv_sec + 2 >= std::int64_t(time(nullptr));
    if (force || recent || !sameTime(st.st_mtim, dir.mtime)) {
        dir.mtime = st.st_mtim;
        dir.subdirectories.clear();
        if (DIR *d = opendir(path.c_str())) {
            while (dirent *e = readdir(d)) {
                const std::string_view name = e->d_name;
                if (name == "." || name == "..")
                    continue;
                unsigned char type = e->d_type;
                if (type == DT_UNKNOWN) {
                    struct stat es;
                    if (lstat(joinPath(path, name).c_str(), &es) == 0)
                        type = S_ISDIR(es.st_mode) ? DT_DIR : S_ISREG(es.st_mode) ? DT_REG : 0;
                }
                if (type == DT_DIR)
                    dir.subdirectories.emplace_back(name);
                else if (type == DT_REG && name.substr(0, kPrefix.size()) == kPrefix)
                    consider(joinPath(path, name), name);
            }
            closedir(d);
        }
    }
    if (depth >= kMaxDepth)
        return;
    // `dir` stays valid: the recursion adds and erases other paths of a std::map only.
    for (const std::string &sub : dir.subdirectories)
        scan(joinPath(path, sub), depth + 1, force, directories);
}

void EventFileFollower::consider(const std::string &path, std::string_view name)
{
    if (!m_seen.insert(path).second)
        return;
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
    std::size_t done = 0;
    for (File &f : m_files) {
        if (done >= maxBytes)
            break;
        done += readFile(f, maxBytes - done);
    }
    return done;
}

} // namespace rankdeck::supervisor
