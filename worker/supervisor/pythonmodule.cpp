// SPDX-License-Identifier: GPL-3.0-or-later
#include "supervisor/pythonmodule.h"

#include "supervisor/privatedirectory.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace rankdeck::supervisor {

extern const char kPythonModule[];
extern const std::size_t kPythonModuleSize;
extern const char kPythonStartupHook[];
extern const std::size_t kPythonStartupHookSize;
extern const char kPythonWarmStart[];
extern const std::size_t kPythonWarmStartSize;

namespace {

bool sameContent(const std::string &path, std::string_view content)
{
    // Never through a link: only a file of ours in our private directory counts.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return false;
    std::string have(content.size() + 1, '\0');
    size_t n = 0;
    for (ssize_t got; n < have.size() && (got = ::read(fd, have.data() + n, have.size() - n)) > 0;)
        n += size_t(got);
    ::close(fd);
    return n == content.size() && std::string_view(have.data(), n) == content;
}

// Writes `file` in `directory` (atomically: ranks sharing a node write it at once) unless it is
// there already with this content. The directory must be private (ensurePrivateDirectory):
// otherwise a file someone else put there with the same content, or with other content
// between our check and the program's import, would run as the user.
bool installFile(const std::string &directory, const std::string &file, std::string_view content,
                 std::string *error)
{
    if (!ensurePrivateDirectory(directory, error))
        return false;
    if (sameContent(file, content))
        return true;
    const std::string tmp = file + ".tmp." + std::to_string(getpid());
    ::unlink(tmp.c_str()); // a leftover of a pid before ours
    // O_EXCL | O_NOFOLLOW: a new file of ours, never a link to another.
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    bool ok = fd >= 0;
    for (std::string_view rest = content; ok && !rest.empty();) {
        const ssize_t n = ::write(fd, rest.data(), rest.size());
        ok = n > 0;
        if (ok)
            rest.remove_prefix(size_t(n));
    }
    if (fd >= 0 && ::close(fd) != 0)
        ok = false;
    if (!ok || std::rename(tmp.c_str(), file.c_str()) != 0) {
        *error = file + ": " + std::strerror(errno);
        ::unlink(tmp.c_str());
        return false;
    }
    return true;
}

} // namespace

bool installPythonFiles(const std::string &directory, bool warmStart, std::string *error)
{
    return installFile(directory + "/rankdeck", directory + "/rankdeck/__init__.py",
                       std::string_view(kPythonModule, kPythonModuleSize), error) &&
           installFile(directory, directory + "/sitecustomize.py",
                       std::string_view(kPythonStartupHook, kPythonStartupHookSize), error) &&
           (!warmStart ||
            installFile(directory + "/rankdeck", directory + "/rankdeck/_warmstart.py",
                        std::string_view(kPythonWarmStart, kPythonWarmStartSize), error));
}

std::string contentDigest(std::initializer_list<std::string_view> parts)
{
    std::uint64_t h = 1469598103934665603ull; // FNV-1a: a name, not a defence
    for (std::string_view part : parts)
        for (unsigned char c : part)
            h = (h ^ c) * 1099511628211ull;
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

std::string pythonFilesDigest()
{
    // A warm server runs the code of the supervisor that started it.
    return contentDigest({std::string_view(kPythonModule, kPythonModuleSize),
                          std::string_view(kPythonStartupHook, kPythonStartupHookSize),
                          std::string_view(kPythonWarmStart, kPythonWarmStartSize)});
}

bool installPythonModule(const std::string &directory, std::string *error)
{
    if (!installPythonFiles(directory, false, error))
        return false;
    const char *old = std::getenv("PYTHONPATH");
    const std::string path = old && *old ? directory + ":" + old : directory;
    setenv("PYTHONPATH", path.c_str(), 1);
    return true;
}

} // namespace rankdeck::supervisor
