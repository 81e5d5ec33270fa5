// SPDX-License-Identifier: GPL-3.0-or-later
#include "util/printabletext.h"

#include <QByteArray>

namespace rankdeck {

namespace {

// Drops ANSI escape sequences (colours, cursor movement): the views cannot render them and
// half of one would show as garbage.
QByteArray stripAnsi(QByteArrayView in)
{
    if (in.indexOf('\x1b') < 0)
        return in.toByteArray();
    QByteArray out;
    out.reserve(in.size());
    const qsizetype n = in.size();
    for (qsizetype i = 0; i < n; ++i) {
        const char c = in[i];
        if (c != '\x1b') {
            out.append(c);
            continue;
        }
        if (i + 1 >= n)
            break;
        const char kind = in[i + 1];
        if (kind == '[') {
            qsizetype j = i + 2;
            while (j < n && uchar(in[j]) >= 0x20 && uchar(in[j]) <= 0x3f)
                ++j;
            if (j < n && uchar(in[j]) >= 0x40 && uchar(in[j]) <= 0x7e)
                i = j;
            else
                i = j - 1;
        } else if (kind == ']' || kind == 'P' || kind == 'X' || kind == '^' || kind == '_') {
            // OSC, DCS, SOS, PM, APC: a string that ends with BEL or ESC '\' (ST); its body is
            // for the terminal (a title, a clipboard write, a sixel), not text.
            qsizetype j = i + 2;
            while (j < n && in[j] != '\a' && !(in[j] == '\x1b' && j + 1 < n && in[j + 1] == '\\'))
                ++j;
            i = (j < n && in[j] == '\x1b') ? j + 1 : j;
        } else {
            i += 1;
        }
    }
    return out;
}

} // namespace

QString printableText(QByteArrayView line, qsizetype maxBytes, bool *cut, bool keepTabs)
{
    QByteArray bytes = stripAnsi(line);
    bool wasCut = false;
    if (maxBytes > 0 && bytes.size() > maxBytes) {
        qsizetype at = maxBytes;
        // Never cut inside a UTF-8 sequence.
        while (at > 0 && (uchar(bytes[at]) & 0xc0) == 0x80)
            --at;
        bytes.truncate(at);
        wasCut = true;
    }
    QString text = QString::fromUtf8(bytes);
    for (QChar &ch : text) {
        const ushort u = ch.unicode();
        if (u < 0x20 && !(keepTabs && u == '\t'))
            ch = QChar(ushort(0x2400 + u)); // Control Pictures block: NUL shows as ␀
        else if (u == 0x7f)
            ch = QChar(ushort(0x2421));
        else if ((u >= 0x80 && u <= 0x9f) || (u >= 0x202a && u <= 0x202e) ||
                 (u >= 0x2066 && u <= 0x2069))
            ch = QChar(QChar::ReplacementCharacter);
    }
    if (cut)
        *cut = wasCut;
    return text;
}

QString printableLabel(const QString &text, qsizetype maxBytes)
{
    bool cut = false;
    QString out = printableText(text.toUtf8(), maxBytes, &cut, false);
    if (cut)
        out += QChar(0x2026);
    return out;
}

QString printableLines(const QString &text, qsizetype maxBytes)
{
    bool cut = false;
    const QByteArray bytes = text.toUtf8();
    const QByteArrayView head =
        maxBytes > 0 && bytes.size() > maxBytes ? QByteArrayView(bytes).first(maxBytes) : bytes;
    cut = head.size() < bytes.size();
    QString out;
    out.reserve(head.size());
    qsizetype start = 0;
    for (;;) {
        const qsizetype nl = head.indexOf('\n', start);
        out += printableText(head.sliced(start, (nl < 0 ? head.size() : nl) - start));
        if (nl < 0)
            break;
        out += QLatin1Char('\n');
        start = nl + 1;
    }
    if (cut)
        out += QChar(0x2026);
    return out;
}

} // namespace rankdeck
