# SPDX-License-Identifier: GPL-3.0-or-later
# A user's own sitecustomize: it must still run under the supervisor's startup hook.
print("user-sitecustomize-ran")
