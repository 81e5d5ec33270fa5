// SPDX-License-Identifier: GPL-3.0-or-later
//
// The `rankdeck` Python module (python/rankdeck/__init__.py), the startup hook
// (python/startup/sitecustomize.py, see PythonStackDumper) and the warm-start server
// (python/rankdeck/_warmstart.py, see WarmStartClient), compiled into the supervisor.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace rankdeck::supervisor {

// Writes the module to <directory>/rankdeck/__init__.py and the hook to
// <directory>/sitecustomize.py (atomically: ranks sharing a node write them at once) unless
// they are there already with this content, and puts <directory> first on
// PYTHONPATH. false when it cannot be written (the program then runs without it).
bool installPythonModule(const std::string &directory, std::string *error);

// The same files (and with `warmStart` rankdeck/_warmstart.py) without touching PYTHONPATH.
bool installPythonFiles(const std::string &directory, bool warmStart, std::string *error);
// A digest of the embedded files' contents (16 hex digits).
std::string pythonFilesDigest();
// A digest of `parts` (16 hex digits, FNV-1a): names files after what they stand for.
std::string contentDigest(std::initializer_list<std::string_view> parts);

} // namespace rankdeck::supervisor
