# SPDX-License-Identifier: GPL-3.0-or-later
"""The startup hook (python/startup/sitecustomize.py) as a module the Python tests can call into,
loaded without acting: it acts on import only where RankDeck's variables are set."""
import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_hook():
    for name in list(os.environ):
        if name.startswith("RANKDECK_"):
            del os.environ[name]
    spec = importlib.util.spec_from_file_location(
        "rankdeck_sitecustomize", os.path.join(ROOT, "python/startup/sitecustomize.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
