// SPDX-License-Identifier: GPL-3.0-or-later
//
// What every fuzz target shares: a reader that takes the fuzzer's bytes apart (a few control
// bytes first, the rest as the parser's input) and the check that turns a broken promise into
// a crash libFuzzer reports. Plain C++ and Qt Core, so the same target builds as a libFuzzer
// binary (clang, RANKDECK_FUZZ=ON) and as a corpus replay test of the normal suite (any compiler).
#pragma once

#include <QByteArray>
#include <QByteArrayView>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

// A promise of the parser under test that this input broke: print it and abort, which
// libFuzzer (and the replay test) report as a crash with this input.
#define FUZZ_CHECK(condition)                                                                      \
    do {                                                                                           \
        if (!(condition)) {                                                                        \
            std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__,             \
                         #condition);                                                              \
            std::abort();                                                                          \
        }                                                                                          \
    } while (false)

// The entry point libFuzzer calls (and fuzzreplay.cpp's main), one per target.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size);

namespace rankdeck::fuzz {

class FuzzInput
{
public:
    FuzzInput(const std::uint8_t *data, std::size_t size)
        : m_data(reinterpret_cast<const char *>(data)), m_size(size)
    {}

    // One control byte; 0 once the input is used up.
    std::uint8_t byte()
    {
        if (m_pos >= m_size)
            return 0;
        return std::uint8_t(m_data[m_pos++]);
    }
    // Up to the next `separator` (dropped) or the end.
    QByteArrayView until(char separator)
    {
        const std::size_t start = m_pos;
        while (m_pos < m_size && m_data[m_pos] != separator)
            ++m_pos;
        const QByteArrayView out(m_data + start, qsizetype(m_pos - start));
        if (m_pos < m_size)
            ++m_pos;
        return out;
    }
    // Up to n bytes.
    QByteArrayView take(std::size_t n)
    {
        const std::size_t start = m_pos;
        m_pos += n < m_size - m_pos ? n : m_size - m_pos;
        return QByteArrayView(m_data + start, qsizetype(m_pos - start));
    }
    QByteArrayView rest() { return take(m_size - m_pos); }
    bool atEnd() const { return m_pos >= m_size; }

private:
    const char *m_data;
    std::size_t m_size;
    std::size_t m_pos = 0;
};

} // namespace rankdeck::fuzz
