// SPDX-License-Identifier: GPL-3.0-or-later
//
// The .gitignore rules of a directory tree that is not a git work tree (or where git is not
// installed): `launch --sync` must skip the same files there that `git ls-files --exclude-standard`
// skips in a repository, so a project behaves the same before and after `git init`. What is
// covered is what project .gitignore files use: blank lines and `#` comments, `\` escapes,
// trailing spaces, `!` negation, a trailing `/` (directories only), a leading or inner `/`
// (anchored to the .gitignore's directory), `*`, `?`, `[…]` and `**`. Not covered: global
// excludes (core.excludesFile) and .git/info/exclude, which only git itself knows.
#pragma once

#include <QList>
#include <QRegularExpression>
#include <QString>

namespace rankdeck {

class GitIgnoreMatcher
{
public:
    // Adds the rules of one .gitignore file whose directory is `base` (relative to the tree's
    // root, "" for the root itself, no trailing slash). Rules added later win over earlier ones,
    // so add a directory's file after its parents'.
    void addRules(const QString &base, const QString &text);
    // Whether relPath (relative to the root, '/'-separated) is ignored by the rules. isDirectory
    // decides rules that end in '/'. An ignored directory's content is skipped by the caller (git
    // does not look inside it, so a negation cannot bring a file below it back).
    bool isIgnored(const QString &relPath, bool isDirectory) const;

    int ruleCount() const { return int(m_rules.size()); }

    // The regular expression for one pattern (without `!` and trailing `/`), matched against a
    // path relative to the pattern's base directory; for the unit tests.
    static QString patternToRegex(const QString &pattern, bool anchored);

private:
    struct Rule
    {
        QString base; // "" or "dir/sub"
        QRegularExpression regex;
        bool negated = false;
        bool directoryOnly = false;
    };
    QList<Rule> m_rules;
};

} // namespace rankdeck
