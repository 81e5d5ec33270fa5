def read_config(path):
    try:
        open(path)
    except FileNotFoundError as e:
        raise RuntimeError(f"cannot load config {path}") from e
read_config("/nonexistent/cfg.yaml")
# SPDX-License-Identifier: GPL-3.0-or-later
