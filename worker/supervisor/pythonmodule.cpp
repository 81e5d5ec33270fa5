// SPDX-License-Identifier: GPL-3.0-or-later
#include "supervisor/pythonmodule.h"

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

bool makeDirectories(const std::string &path)
{
    for (size_t i = 1; i <= path.size(); ++i) {
        if (i == path.size() || path[i] == '/') {
            const std::string part = path.substr(0, i);
            if (mkdir(part.c_str(), 0755) != 0 && errno != EEXIST)
                return false;
        }
    }
    return true;
}

bool sameContent(const std::string &path, std::string_view content)
{
    FILE *f = std::fopen(path.c_str(), "rbe");
    if (!f)
        return false;
    std::string have(content.size() + 1, '\0');
    const size_t n = std::fread(have.data(), 1, have.size(), f);
    std::fclose(f);
    return n == content.size() && std::string_view(have.data(), n) == content;
}

// Writes `file` in `directory` (atomically: ranks sharing a node write it at once) unless it is
// there already with this content.
bool installFile(const std::string &directory, const std::string &file, std::string_view content,
                 std::string *error)
{
    if (sameContent(file, content))
        return true;
    if (!makeDirectories(directory)) {
        *error = directory + ": " + std::strerror(errno);
        return false;
    }
    const std::string tmp = file + ".tmp." + std::to_string(getpid());
    FILE *f = std::fopen(tmp.c_str(), "wbe");
    if (!f || std::fwrite(content.data(), 1, content.size(), f) != content.size() ||
        std::fclose(f) != 0 || std::rename(tmp.c_str(), file.c_str()) != 0) {
        *error = file + ": " + std::strerror(errno);
        std::remove(tmp.c_str());
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
