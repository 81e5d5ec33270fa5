# SPDX-License-Identifier: GPL-3.0-or-later
# Dies by SIGABRT from the C library's abort().
import os

os.abort()
