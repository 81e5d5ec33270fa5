import importlib, sys
sys.path.insert(0, "/tmp/pygen")
open("/tmp/pygen/broken_mod.py", "w").write("def f(:\n    return 1\n")
import broken_mod
# SPDX-License-Identifier: GPL-3.0-or-later
