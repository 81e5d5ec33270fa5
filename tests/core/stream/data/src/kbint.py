import signal, os, time
def wait():
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(1)
wait()
# SPDX-License-Identifier: GPL-3.0-or-later
