// SPDX-License-Identifier: GPL-3.0-or-later
//
// The `rankdeck` Python module (python/rankdeck/__init__.py) and the startup hook
// (python/startup/sitecustomize.py, see PythonStackDumper), compiled into the supervisor.
#pragma once

#include <string>

namespace rankdeck::supervisor {

// Writes the module to <directory>/rankdeck/__init__.py and the hook to
// <directory>/sitecustomize.py (atomically: ranks sharing a node write them at once) unless
// they are there already with this content, and puts <directory> first on
// PYTHONPATH. false when it cannot be written (the program then runs without it).
bool installPythonModule(const std::string &directory, std::string *error);

} // namespace rankdeck::supervisor
