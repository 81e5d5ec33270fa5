def r(n):
    return r(n + 1)
r(0)
# SPDX-License-Identifier: GPL-3.0-or-later
