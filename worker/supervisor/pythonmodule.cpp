// SPDX-License-Identifier: GPL-3.0-or-later
#include "supervisor/pythonmodule.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace rankdeck::supervisor {

extern const char kPythonModule[];
extern const std::size_t kPythonModuleSize;

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

} // namespace

bool installPythonModule(const std::string &directory, std::string *error)
{
    const std::string_view content(kPythonModule, kPythonModuleSize);
    const std::string package = directory + "/rankdeck";
    const std::string file = package + "/__init__.py";
    if (!sameContent(file, content)) {
        if (!makeDirectories(package)) {
            *error = package + ": " + std::strerror(errno);
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
    }
    const char *old = std::getenv("PYTHONPATH");
    const std::string path = old && *old ? directory + ":" + old : directory;
    setenv("PYTHONPATH", path.c_str(), 1);
    return true;
}

} // namespace rankdeck::supervisor
