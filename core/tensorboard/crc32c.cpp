// SPDX-License-Identifier: GPL-3.0-or-later
#include "tensorboard/crc32c.h"

#include <array>

namespace rankdeck::tensorboard {

namespace {

constexpr std::array<std::uint32_t, 256> makeTable()
{
    std::array<std::uint32_t, 256> table{};
    for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t c = i;
        for (int k = 0; k < 8; ++k)
            c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        table[i] = c;
    }
    return table;
}

constexpr std::array<std::uint32_t, 256> kTable = makeTable();

} // namespace

std::uint32_t crc32c(const char *data, std::size_t size, std::uint32_t crc)
{
    crc = ~crc;
    const auto *p = reinterpret_cast<const unsigned char *>(data);
    for (std::size_t i = 0; i < size; ++i)
        crc = kTable[(crc ^ p[i]) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

std::uint32_t crc32c(std::span<const std::byte> data, std::uint32_t crc)
{
    return crc32c(reinterpret_cast<const char *>(data.data()), data.size(), crc);
}

} // namespace rankdeck::tensorboard
