def check(shape):
    raise AssertionError("shapes do not match:\n  expected (32, 128)\n  got      (32, 64)")
check((32, 64))
# SPDX-License-Identifier: GPL-3.0-or-later
