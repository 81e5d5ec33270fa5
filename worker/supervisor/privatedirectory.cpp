// SPDX-License-Identifier: GPL-3.0-or-later
#include "supervisor/privatedirectory.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rankdeck::supervisor {

bool ensurePrivateDirectory(const std::string &path, std::string *why)
{
    // Parents as they are (/tmp is everyone's); only what RankDeck owns must be private.
    for (size_t i = 1; i < path.size(); ++i) {
        if (path[i] == '/' && ::mkdir(path.substr(0, i).c_str(), 0755) != 0 && errno != EEXIST) {
            *why = path.substr(0, i) + ": " + std::strerror(errno);
            return false;
        }
    }
    if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
        *why = path + ": " + std::strerror(errno);
        return false;
    }
    struct stat st
    {
    };
    if (::lstat(path.c_str(), &st) != 0) {
        *why = path + ": " + std::strerror(errno);
        return false;
    }
    const std::string refuse = path + " is not a private directory of this user (";
    if (!S_ISDIR(st.st_mode)) {
        *why = refuse + (S_ISLNK(st.st_mode) ? "a symbolic link" : "not a directory") +
               "); remove it or choose another with --run-dir";
        return false;
    }
    if (st.st_uid != ::getuid()) {
        *why = refuse + "owned by uid " + std::to_string(st.st_uid) +
               ": its files would run as you); remove it or choose another with --run-dir";
        return false;
    }
    if ((st.st_mode & 022) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
        *why = refuse + "mode " + mode +
               ": others may write to it, and what they put there would run as you); remove "
               "it or choose another with --run-dir";
        return false;
    }
    if ((st.st_mode & 077) != 0 && ::chmod(path.c_str(), 0700) != 0) {
        *why = path + ": chmod 0700: " + std::strerror(errno);
        return false;
    }
    return true;
}

} // namespace rankdeck::supervisor
