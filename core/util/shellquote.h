// SPDX-License-Identifier: GPL-3.0-or-later
//
// POSIX shell quoting for the commands the SSH transport sends. Every word that reaches a remote
// shell (paths, arguments, environment values, profile fields) goes through shellQuote(), so no
// character in it (quotes, $(…), backticks, ;, newlines) can start a command.
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace rankdeck::shell {

// One word for a POSIX shell (sh, bash, dash, zsh, ksh): single-quoted, with ' written as '\''.
QByteArray quote(const QString &word);
QByteArray quote(const QByteArray &word);
// Several words, quoted and joined by spaces.
QByteArray quoteAll(const QStringList &words);
// Words for a person to read and paste (a command to copy): quoted only where a shell needs it.
QString readable(const QStringList &words);
// Whether name can be an environment variable (the shell's and env's rule: [A-Za-z_][A-Za-z0-9_]*).
bool isValidVariableName(const QString &name);

} // namespace rankdeck::shell
