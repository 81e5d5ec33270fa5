# SPDX-License-Identifier: GPL-3.0-or-later
# Dies by SIGKILL sent to itself: no stack can be taken, the event must still name the signal.
import os

os.kill(os.getpid(), 9)
