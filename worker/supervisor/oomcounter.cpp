// SPDX-License-Identifier: GPL-3.0-or-later
#include "supervisor/oomcounter.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <vector>

namespace rankdeck::supervisor {

namespace {

std::string readFile(const std::string &path, size_t limit)
{
    std::string s;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return s;
    char buf[4096];
    ssize_t n;
    while (s.size() < limit && (n = ::read(fd, buf, sizeof buf)) > 0)
        s.append(buf, size_t(n));
    ::close(fd);
    return s;
}

bool hasOption(const std::string &options, const std::string &name)
{
    std::stringstream ss(options);
    std::string o;
    while (std::getline(ss, o, ','))
        if (o == name)
            return true;
    return false;
}

// The mount point of the v2 hierarchy (v1Controller empty) or of the v1 hierarchy that holds
// v1Controller, with the cgroup path that mount's root stands for.
bool findMount(const std::string &v1Controller, std::string *mountPoint, std::string *root)
{
    std::stringstream lines(readFile("/proc/self/mountinfo", 1 << 20));
    std::string line;
    while (std::getline(lines, line)) {
        // id parent major:minor root mount-point options [optional…] - fstype source super-options
        const size_t dash = line.find(" - ");
        if (dash == std::string::npos)
            continue;
        std::stringstream head(line.substr(0, dash));
        std::stringstream tail(line.substr(dash + 3));
        std::string id, parent, dev, mroot, point, fstype, source, superOptions;
        head >> id >> parent >> dev >> mroot >> point;
        tail >> fstype >> source >> superOptions;
        const bool match = v1Controller.empty()
                               ? fstype == "cgroup2"
                               : fstype == "cgroup" && hasOption(superOptions, v1Controller);
        if (match) {
            *mountPoint = point;
            *root = mroot;
            return true;
        }
    }
    return false;
}

std::string joinCgroupPath(const std::string &mountPoint, const std::string &root,
                           const std::string &cgroup)
{
    // A container's mount root is its own cgroup ("/docker/…" mounted as "/"): strip it.
    std::string rel = cgroup;
    if (root != "/" && rel.compare(0, root.size(), root) == 0)
        rel = rel.substr(root.size());
    if (rel == "/")
        rel.clear();
    return mountPoint + rel;
}

} // namespace

OomCounter::OomCounter()
{
    std::stringstream lines(readFile("/proc/self/cgroup", 65536));
    std::string line, v2Path, v1MemoryPath;
    while (std::getline(lines, line)) {
        // hierarchy-id:controllers:path
        const size_t a = line.find(':');
        const size_t b = a == std::string::npos ? a : line.find(':', a + 1);
        if (b == std::string::npos)
            continue;
        const std::string controllers = line.substr(a + 1, b - a - 1);
        const std::string path = line.substr(b + 1);
        if (line.compare(0, a, "0") == 0 && controllers.empty())
            v2Path = path;
        else if (hasOption(controllers, "memory"))
            v1MemoryPath = path;
    }
    std::string mount, root;
    if (!v2Path.empty() && findMount({}, &mount, &root)) {
        const std::string f = joinCgroupPath(mount, root, v2Path) + "/memory.events";
        if (::access(f.c_str(), R_OK) == 0) {
            m_file = f;
            return;
        }
    }
    if (!v1MemoryPath.empty() && findMount("memory", &mount, &root)) {
        const std::string f = joinCgroupPath(mount, root, v1MemoryPath) + "/memory.oom_control";
        if (::access(f.c_str(), R_OK) == 0)
            m_file = f;
    }
}

std::int64_t OomCounter::read() const
{
    if (m_file.empty())
        return -1;
    std::stringstream lines(readFile(m_file, 65536));
    std::string key;
    std::int64_t value = 0;
    while (lines >> key >> value)
        if (key == "oom_kill")
            return value;
    return -1;
}

} // namespace rankdeck::supervisor
