// SPDX-License-Identifier: GPL-3.0-or-later
#include "crash/rawcrashreport.h"

#include "crash/crashstate.h"
#include "crash/signalsafe.h"
#include "wire/wireprotocol.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace rankdeck::crash::detail {

namespace {

// Fixed-buffer formatting: no malloc, no locale, no stdio.
struct RawBuffer
{
    static constexpr std::size_t kCapacity = 64 * 1024;
    char data[kCapacity];
    std::size_t size = 0;

    void clear() { size = 0; }
    void put(const char *s, std::size_t n)
    {
        for (std::size_t i = 0; i < n && size < kCapacity; ++i)
            data[size++] = s[i];
    }
    void put(const char *s) { put(s, std::strlen(s)); }
    void putChar(char c) { put(&c, 1); }
    void putDec(long long v)
    {
        char tmp[24];
        int n = 0;
        const bool neg = v < 0;
        unsigned long long u =
            neg ? 0ull - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
        do {
            tmp[n++] = static_cast<char>('0' + u % 10);
            u /= 10;
        } while (u);
        if (neg)
            putChar('-');
        while (n)
            putChar(tmp[--n]);
    }
    void putHex(std::uintptr_t v, int minDigits = 1)
    {
        static constexpr char hex[] = "0123456789abcdef";
        char tmp[20];
        int n = 0;
        do {
            tmp[n++] = hex[v & 0xf];
            v >>= 4;
        } while (v || n < minDigits);
        put("0x");
        while (n)
            putChar(tmp[--n]);
    }
    void putJsonString(const char *s, std::size_t n)
    {
        static constexpr char hex[] = "0123456789abcdef";
        putChar('"');
        for (std::size_t i = 0; i < n; ++i) {
            const auto c = static_cast<unsigned char>(s[i]);
            if (c == '"' || c == '\\') {
                putChar('\\');
                putChar(static_cast<char>(c));
            } else if (c == '\n') {
                put("\\n");
            } else if (c < 0x20 || c == 0x7f) {
                put("\\u00");
                putChar(hex[c >> 4]);
                putChar(hex[c & 0xf]);
            } else {
                putChar(static_cast<char>(c));
            }
        }
        putChar('"');
    }
    void putJsonKey(std::string_view key)
    {
        if (size > 1)
            putChar(',');
        putJsonString(key.data(), key.size());
        putChar(':');
    }
};
RawBuffer g_rawJson;
RawBuffer g_rawLine;
RawBuffer g_rawStack;
char g_maps[512 * 1024];

// Module path and file offset for a PC, read from /proc/self/maps with plain syscalls.
bool lookupMapping(const char *maps, std::size_t mapsSize, std::uintptr_t pc, const char **path,
                   std::size_t *pathLen, std::uintptr_t *offset)
{
    std::size_t pos = 0;
    while (pos < mapsSize) {
        std::size_t end = pos;
        while (end < mapsSize && maps[end] != '\n')
            ++end;
        // "start-end perms offset dev inode   path"
        auto parseHex = [&](std::size_t &p, std::uintptr_t &out) {
            out = 0;
            while (p < end) {
                const char c = maps[p];
                int d;
                if (c >= '0' && c <= '9')
                    d = c - '0';
                else if (c >= 'a' && c <= 'f')
                    d = c - 'a' + 10;
                else
                    break;
                out = (out << 4) | static_cast<std::uintptr_t>(d);
                ++p;
            }
        };
        std::size_t p = pos;
        std::uintptr_t lo = 0, hi = 0, fileOffset = 0;
        parseHex(p, lo);
        ++p;
        parseHex(p, hi);
        if (pc >= lo && pc < hi) {
            while (p < end && maps[p] != ' ')
                ++p;
            ++p; // perms
            while (p < end && maps[p] != ' ')
                ++p;
            ++p;
            parseHex(p, fileOffset);
            for (int field = 0; field < 2 && p < end; ++field) { // dev, inode
                while (p < end && maps[p] == ' ')
                    ++p;
                while (p < end && maps[p] != ' ')
                    ++p;
            }
            while (p < end && maps[p] == ' ')
                ++p;
            *path = maps + p;
            *pathLen = end - p;
            *offset = pc - lo + fileOffset;
            return true;
        }
        pos = end + 1;
    }
    return false;
}

} // namespace

void writeRawCrashReport()
{
    std::size_t mapsSize = 0;
    const int fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n;
        while (mapsSize < sizeof g_maps &&
               (n = ::read(fd, g_maps + mapsSize, sizeof g_maps - mapsSize)) != 0) {
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                break;
            }
            mapsSize += static_cast<std::size_t>(n);
        }
        ::close(fd);
    }
    RawBuffer &st = g_rawStack;
    st.clear();
    for (int i = 0; i < g_crash.count; ++i) {
        const auto pc = reinterpret_cast<std::uintptr_t>(g_crash.pcs[i]);
        if (i)
            st.putChar('\n');
        st.putChar('#');
        st.putDec(i);
        st.putChar(' ');
        st.putHex(pc, 16);
        st.put(" in ??");
        const char *path = nullptr;
        std::size_t pathLen = 0;
        std::uintptr_t offset = 0;
        if (lookupMapping(g_maps, mapsSize, pc, &path, &pathLen, &offset) && pathLen > 0) {
            std::size_t base = pathLen;
            while (base > 0 && path[base - 1] != '/')
                --base;
            st.put(" [");
            st.put(path + base, pathLen - base);
            st.putChar('+');
            st.putHex(offset);
            st.putChar(']');
        }
    }

    RawBuffer &msg = g_rawLine; // reused below for the event line; the message is copied first
    msg.clear();
    msg.put(signalDescription(g_crash.signal, g_crash.code));
    if (faultHasAddress(g_crash.signal, g_crash.code)) {
        msg.put(" at address ");
        msg.putHex(reinterpret_cast<std::uintptr_t>(g_crash.address));
    }
    msg.put(" (stack not symbolized: the symbolizer did not finish)");

    RawBuffer &js = g_rawJson;
    js.clear();
    js.putChar('{');
    js.putJsonKey(wire::field::Type);
    js.putJsonString(wire::event::Crash.data(), wire::event::Crash.size());
    js.putJsonKey(wire::field::Time);
    js.putDec(g_crash.timeUs);
    js.putJsonKey(wire::field::Rank);
    js.putDec(g_settings.rank);
    js.putJsonKey(wire::field::Kind);
    js.putJsonString("signal", 6);
    js.putJsonKey(wire::field::Signal);
    js.putDec(g_crash.signal);
    js.putJsonKey(wire::field::SignalName);
    js.put("\"");
    js.put(signalName(g_crash.signal));
    js.put("\"");
    js.putJsonKey(wire::field::Message);
    js.putJsonString(msg.data, msg.size);
    js.putJsonKey(wire::field::Thread);
    {
        RawBuffer &t = g_rawLine;
        t.clear();
        t.put(g_crash.threadName);
        t.put(" (tid ");
        t.putDec(g_crash.tid);
        t.put(g_crash.tid == ::getpid() ? ", main thread)" : ")");
        js.putJsonString(t.data, t.size);
    }
    js.putJsonKey(wire::field::Pid);
    js.putDec(::getpid());
    js.putJsonKey(wire::field::Stack);
    js.putJsonString(st.data, st.size);
    js.putJsonKey(wire::field::BuildId);
    js.putJsonString(g_settings.buildId, std::strlen(g_settings.buildId));
    js.putChar('}');

    RawBuffer &line = g_rawLine;
    line.clear();
    line.put(wire::kMarker.data(), wire::kMarker.size());
    const std::uint32_t crc = wire::crc32(std::string_view(js.data, js.size));
    static constexpr char hex[] = "0123456789abcdef";
    for (int shift = 28; shift >= 0; shift -= 4)
        line.putChar(hex[(crc >> shift) & 0xf]);
    line.putChar(' ');
    line.put(js.data, js.size);
    line.putChar('\n');
    writeAll(STDOUT_FILENO, line.data, line.size);

    static const char header[] =
        "rankdeck-worker: fatal signal, raw stack (most recent call first):\n";
    writeAll(STDERR_FILENO, header, sizeof header - 1);
    writeAll(STDERR_FILENO, st.data, st.size);
    writeAll(STDERR_FILENO, "\n", 1);
    if (g_settings.reportPath[0]) {
        const int out = ::open(g_settings.reportPath,
                               O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (out >= 0) {
            writeAll(out, header, sizeof header - 1);
            writeAll(out, st.data, st.size);
            writeAll(out, "\n", 1);
            writeAll(out, line.data, line.size);
            ::close(out);
        }
    }
}

} // namespace rankdeck::crash::detail
