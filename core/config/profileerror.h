// SPDX-License-Identifier: GPL-3.0-or-later
//
// A problem with a cluster profile, named by file, line and field. A header of its own so that a
// transport kind's profile part (profilekind.h) can report one without the store.
#pragma once

#include <QString>

namespace rankdeck {

struct ProfileError
{
    QString file;
    int line = 0;  // 1-based; 0 when the problem is not tied to a line
    QString field; // e.g. "nodes[1].port"; empty for syntax errors
    QString message;

    // "file:line: field: message", the form editors and terminals link to.
    QString toString() const;
};

} // namespace rankdeck
