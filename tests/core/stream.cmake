# SPDX-License-Identifier: GPL-3.0-or-later
# Unit tests of the stream side of core (line splitting, events, log and metrics stores,
# smoothing, downsampling, CSV). Included from tests/core/CMakeLists.txt.
foreach(_rankdeck_stream_test linesplitter eventparser logstore logmodel metricsstore smoothing downsampler csvexport)
    rankdeck_add_test(tst_${_rankdeck_stream_test}
        SOURCES ${CMAKE_CURRENT_LIST_DIR}/tst_${_rankdeck_stream_test}.cpp
        LIBS rankdeck_core rankdeck_wire
        LABELS unit
        TIMEOUT 120)
endforeach()
