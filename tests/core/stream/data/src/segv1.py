import ctypes
def crash(): ctypes.string_at(0)
crash()
# SPDX-License-Identifier: GPL-3.0-or-later
