// SPDX-License-Identifier: GPL-3.0-or-later
#include "supervisor/jsonreader.h"

#include <cstdint>

namespace rankdeck::supervisor {

namespace {

// Deeper documents are not torchelastic's; recursion stays far from the stack's end.
constexpr int kMaxDepth = 64;

void appendUtf8(std::string &out, std::uint32_t cp)
{
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xc0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out += char(0xe0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3f));
        out += char(0x80 | (cp & 0x3f));
    } else {
        out += char(0xf0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3f));
        out += char(0x80 | ((cp >> 6) & 0x3f));
        out += char(0x80 | (cp & 0x3f));
    }
}

} // namespace

class JsonParser
{
public:
    explicit JsonParser(std::string_view text) : m_text(text) {}

    bool document(JsonValue *out)
    {
        if (!value(out, 0))
            return false;
        skipSpace();
        return m_pos == m_text.size();
    }

private:
    void skipSpace()
    {
        while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\t' ||
                                         m_text[m_pos] == '\n' || m_text[m_pos] == '\r'))
            ++m_pos;
    }

    bool literal(std::string_view word)
    {
        if (m_text.substr(m_pos, word.size()) != word)
            return false;
        m_pos += word.size();
        return true;
    }

    bool hex4(std::uint32_t *cp)
    {
        if (m_pos + 4 > m_text.size())
            return false;
        std::uint32_t v = 0;
        for (int i = 0; i < 4; ++i) {
            const char c = m_text[m_pos++];
            v <<= 4;
            if (c >= '0' && c <= '9')
                v |= std::uint32_t(c - '0');
            else if (c >= 'a' && c <= 'f')
                v |= std::uint32_t(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F')
                v |= std::uint32_t(c - 'A' + 10);
            else
                return false;
        }
        *cp = v;
        return true;
    }

    bool string(std::string *out)
    {
        if (m_pos >= m_text.size() || m_text[m_pos] != '"')
            return false;
        ++m_pos;
        while (m_pos < m_text.size()) {
            const char c = m_text[m_pos++];
            if (c == '"')
                return true;
            if (static_cast<unsigned char>(c) < 0x20)
                return false;
            if (c != '\\') {
                *out += c;
                continue;
            }
            if (m_pos >= m_text.size())
                return false;
            const char e = m_text[m_pos++];
            switch (e) {
            case '"':
            case '\\':
            case '/':
                *out += e;
                break;
            case 'b':
                *out += '\b';
                break;
            case 'f':
                *out += '\f';
                break;
            case 'n':
                *out += '\n';
                break;
            case 'r':
                *out += '\r';
                break;
            case 't':
                *out += '\t';
                break;
            case 'u': {
                std::uint32_t cp = 0;
                if (!hex4(&cp))
                    return false;
                if (cp >= 0xd800 && cp < 0xdc00) {
                    std::uint32_t low = 0;
                    // A lone high surrogate becomes U+FFFD rather than invalid UTF-8.
                    if (m_text.substr(m_pos, 2) == "\\u") {
                        m_pos += 2;
                        if (!hex4(&low))
                            return false;
                    }
                    cp = (low >= 0xdc00 && low < 0xe000)
                             ? 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00)
                             : 0xfffd;
                } else if (cp >= 0xdc00 && cp < 0xe000) {
                    cp = 0xfffd;
                }
                appendUtf8(*out, cp);
                break;
            }
            default:
                return false;
            }
        }
        return false;
    }

    bool number(std::string *out)
    {
        const size_t start = m_pos;
        auto digits = [&] {
            const size_t from = m_pos;
            while (m_pos < m_text.size() && m_text[m_pos] >= '0' && m_text[m_pos] <= '9')
                ++m_pos;
            return m_pos > from;
        };
        if (m_pos < m_text.size() && m_text[m_pos] == '-')
            ++m_pos;
        if (!digits())
            return false;
        if (m_pos < m_text.size() && m_text[m_pos] == '.') {
            ++m_pos;
            if (!digits())
                return false;
        }
        if (m_pos < m_text.size() && (m_text[m_pos] == 'e' || m_text[m_pos] == 'E')) {
            ++m_pos;
            if (m_pos < m_text.size() && (m_text[m_pos] == '+' || m_text[m_pos] == '-'))
                ++m_pos;
            if (!digits())
                return false;
        }
        *out = std::string(m_text.substr(start, m_pos - start));
        return true;
    }

    bool value(JsonValue *out, int depth)
    {
        if (depth > kMaxDepth)
            return false;
        skipSpace();
        if (m_pos >= m_text.size())
            return false;
        const char c = m_text[m_pos];
        if (c == '{') {
            ++m_pos;
            out->m_type = JsonValue::Type::Object;
            skipSpace();
            if (m_pos < m_text.size() && m_text[m_pos] == '}') {
                ++m_pos;
                return true;
            }
            for (;;) {
                skipSpace();
                std::string key;
                if (!string(&key))
                    return false;
                skipSpace();
                if (m_pos >= m_text.size() || m_text[m_pos] != ':')
                    return false;
                ++m_pos;
                JsonValue member;
                if (!value(&member, depth + 1))
                    return false;
                out->m_object[key] = std::move(member); // the last duplicate wins, as in Python
                skipSpace();
                if (m_pos < m_text.size() && m_text[m_pos] == ',') {
                    ++m_pos;
                    continue;
                }
                if (m_pos < m_text.size() && m_text[m_pos] == '}') {
                    ++m_pos;
                    return true;
                }
                return false;
            }
        }
        if (c == '[') {
            ++m_pos;
            out->m_type = JsonValue::Type::Array;
            skipSpace();
            if (m_pos < m_text.size() && m_text[m_pos] == ']') {
                ++m_pos;
                return true;
            }
            for (;;) {
                JsonValue element;
                if (!value(&element, depth + 1))
                    return false;
                out->m_array.push_back(std::move(element));
                skipSpace();
                if (m_pos < m_text.size() && m_text[m_pos] == ',') {
                    ++m_pos;
                    continue;
                }
                if (m_pos < m_text.size() && m_text[m_pos] == ']') {
                    ++m_pos;
                    return true;
                }
                return false;
            }
        }
        if (c == '"') {
            out->m_type = JsonValue::Type::String;
            return string(&out->m_string);
        }
        if (literal("true") || literal("false")) {
            out->m_type = JsonValue::Type::Bool;
            out->m_bool = c == 't';
            return true;
        }
        if (literal("null")) {
            out->m_type = JsonValue::Type::Null;
            return true;
        }
        out->m_type = JsonValue::Type::Number;
        return number(&out->m_string);
    }

    std::string_view m_text;
    size_t m_pos = 0;
};

bool JsonValue::parse(std::string_view text, JsonValue *out)
{
    JsonValue v;
    JsonParser parser(text);
    if (!parser.document(&v))
        return false;
    *out = std::move(v);
    return true;
}

const JsonValue &JsonValue::member(const std::string &key) const
{
    static const JsonValue null;
    if (m_type != Type::Object)
        return null;
    const auto it = m_object.find(key);
    return it == m_object.end() ? null : it->second;
}

} // namespace rankdeck::supervisor
