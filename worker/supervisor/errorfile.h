// SPDX-License-Identifier: GPL-3.0-or-later
//
// torchelastic's error file: a program decorated with
// torch.distributed.elastic.multiprocessing.errors.record writes its uncaught exception to
// $TORCHELASTIC_ERROR_FILE. The supervisor points that at the run directory (unless the user
// chose a path), and when the program fails reads the exception's type, message and Python
// traceback from it, so the error event names what happened without parsing the log.
// The file is the program's: a huge, truncated or hostile one is read at most 1 MiB deep and
// ignored when it does not parse.
#pragma once

#include <sys/types.h>

#include <string>

namespace rankdeck::supervisor {

struct ElasticError
{
    bool valid = false;
    std::string exceptionType; // "ValueError"; empty when the message names none
    std::string message;       // the exception's message, without the type
    std::string traceback;     // py_callstack, verbatim
};

class ErrorFile
{
public:
    // Sets TORCHELASTIC_ERROR_FILE to defaultPath unless the user set it; removes a stale file
    // of ours, and remembers the state of the user's so that an old one is never reported.
    void prepare(const std::string &defaultPath);
    const std::string &path() const { return m_path; }
    // What the program wrote since prepare(); !valid when nothing (new) parses.
    ElasticError read() const;

    // The parse alone, for either format (nested "message" object or plain string).
    static ElasticError parse(const std::string &json);

private:
    std::string m_path;
    bool m_hadOld = false; // the user's path held a file before the program started
    struct timespec m_oldMtime
    {
    };
    off_t m_oldSize = 0;
};

} // namespace rankdeck::supervisor
