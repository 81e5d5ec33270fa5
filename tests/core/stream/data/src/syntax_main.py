x = 1
def f(:
    return 1
# SPDX-License-Identifier: GPL-3.0-or-later
