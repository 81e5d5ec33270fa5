// SPDX-License-Identifier: GPL-3.0-or-later
//
// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), which TFRecord framing checks every
// length and payload with. Debian 12 ships no C++ library for it (its abseil predates absl/crc),
// so this is the table-driven byte-wise form, checked against RFC 3720's test vectors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace rankdeck::tensorboard {

std::uint32_t crc32c(std::span<const std::byte> data, std::uint32_t crc = 0);
std::uint32_t crc32c(const char *data, std::size_t size, std::uint32_t crc = 0);

// TFRecord stores CRCs masked, so that a CRC over data that holds CRCs stays well distributed.
constexpr std::uint32_t maskCrc(std::uint32_t crc)
{
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}
constexpr std::uint32_t unmaskCrc(std::uint32_t masked)
{
    const std::uint32_t rot = masked - 0xa282ead8u;
    return (rot >> 17) | (rot << 15);
}

} // namespace rankdeck::tensorboard
