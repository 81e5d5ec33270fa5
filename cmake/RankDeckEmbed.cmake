# SPDX-License-Identifier: GPL-3.0-or-later
#
# rankdeck_embed_file(INPUT OUTPUT NAMESPACE SYMBOL)
# Writes OUTPUT, a C++ source that defines `extern const char SYMBOL[]` (the bytes of INPUT
# plus a NUL) and `extern const std::size_t SYMBOL##Size` in NAMESPACE, so that a binary
# deployed alone to a node carries the file. Re-run when INPUT changes.
function(rankdeck_embed_file input output namespace symbol)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${input})
    file(READ ${input} _hex HEX)
    string(LENGTH "${_hex}" _len)
    math(EXPR _len "${_len} / 2")
    string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," _bytes "${_hex}")
    file(RELATIVE_PATH _from ${PROJECT_SOURCE_DIR} ${input})
    file(CONFIGURE OUTPUT ${output} CONTENT
"// Generated from ${_from} by rankdeck_embed_file (cmake/RankDeckEmbed.cmake).
#include <cstddef>
namespace ${namespace} {
extern const char ${symbol}[] = {${_bytes} 0};
extern const std::size_t ${symbol}Size = ${_len};
}
")
endfunction()
