# SPDX-License-Identifier: GPL-3.0-or-later
# Prints whether the user's sitecustomize ran before it, and which module sitecustomize is.
import sys

print("sitecustomize is", getattr(sys.modules.get("sitecustomize"), "__file__", None))
