// SPDX-License-Identifier: GPL-3.0-or-later
//
// A small, strict JSON reader for files the user's program writes (torchelastic's error file).
// The supervisor has no JSON library and must never crash on what it reads: input is capped by
// the caller, nesting is limited, and anything that is not valid JSON gives no value at all.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rankdeck::supervisor {

class JsonValue
{
public:
    enum class Type
    {
        Null,
        Bool,
        Number,
        String,
        Array,
        Object
    };

    // Parses a whole document; false (and *out untouched) unless all of `text` is one value.
    static bool parse(std::string_view text, JsonValue *out);

    Type type() const { return m_type; }
    bool isString() const { return m_type == Type::String; }
    bool isObject() const { return m_type == Type::Object; }
    bool isNumber() const { return m_type == Type::Number; }
    const std::string &string() const { return m_string; } // String; the number's text for Number
    // The member `key` of an object; a Null value when absent or not an object.
    const JsonValue &member(const std::string &key) const;

private:
    friend class JsonParser;
    Type m_type = Type::Null;
    bool m_bool = false;
    std::string m_string;
    std::vector<JsonValue> m_array;
    std::map<std::string, JsonValue> m_object;
};

} // namespace rankdeck::supervisor
