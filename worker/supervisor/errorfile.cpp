// SPDX-License-Identifier: GPL-3.0-or-later
#include "supervisor/errorfile.h"

#include "supervisor/jsonreader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace rankdeck::supervisor {

namespace {

constexpr size_t kMaxErrorFile = 1 << 20;

// "ValueError: boom" → ("ValueError", "boom"); "pkg.mod.Error: x" keeps the dotted name. A
// message that does not start with an identifier and ": " has no type.
void splitTypeAndMessage(const std::string &text, std::string *type, std::string *message)
{
    const size_t colon = text.find(':');
    bool identifier = colon != std::string::npos && colon > 0;
    for (size_t i = 0; identifier && i < colon; ++i) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        identifier = c == '_' || c == '.' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                     (i > 0 && c >= '0' && c <= '9');
    }
    if (!identifier) {
        *message = text;
        return;
    }
    *type = text.substr(0, colon);
    size_t start = colon + 1;
    if (start < text.size() && text[start] == ' ')
        ++start;
    *message = text.substr(start);
}

} // namespace

void ErrorFile::prepare(const std::string &defaultPath)
{
    const char *user = std::getenv("TORCHELASTIC_ERROR_FILE");
    if (user && *user) {
        m_path = user;
        struct stat st
        {
        };
        m_hadOld = ::stat(m_path.c_str(), &st) == 0;
        if (m_hadOld) {
            m_oldMtime = st.st_mtim;
            m_oldSize = st.st_size;
        }
        return;
    }
    m_path = defaultPath;
    ::unlink(m_path.c_str());
    setenv("TORCHELASTIC_ERROR_FILE", m_path.c_str(), 1);
}

ElasticError ErrorFile::read() const
{
    if (m_path.empty())
        return {};
    const int fd = ::open(m_path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return {};
    struct stat st
    {
    };
    // Only a regular file: a FIFO or device there would block or never end.
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        (m_hadOld && st.st_mtim.tv_sec == m_oldMtime.tv_sec &&
         st.st_mtim.tv_nsec == m_oldMtime.tv_nsec && st.st_size == m_oldSize)) {
        ::close(fd);
        return {};
    }
    std::string text;
    char buf[65536];
    while (text.size() <= kMaxErrorFile) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        text.append(buf, size_t(n));
    }
    ::close(fd);
    if (text.size() > kMaxErrorFile)
        return {};
    return parse(text);
}

ElasticError ErrorFile::parse(const std::string &json)
{
    ElasticError e;
    JsonValue doc;
    if (!JsonValue::parse(json, &doc) || !doc.isObject())
        return e;
    const JsonValue &message = doc.member("message");
    std::string text;
    if (message.isString()) {
        text = message.string();
    } else if (message.isObject() && message.member("message").isString()) {
        text = message.member("message").string();
        const JsonValue &callstack = message.member("extraInfo").member("py_callstack");
        if (callstack.isString())
            e.traceback = callstack.string();
    } else {
        return e;
    }
    splitTypeAndMessage(text, &e.exceptionType, &e.message);
    e.valid = true;
    return e;
}

} // namespace rankdeck::supervisor
