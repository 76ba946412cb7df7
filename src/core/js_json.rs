//! JSON text exactly as JavaScript's `JSON.stringify(value)` prints it.
//!
//! Upstream hosts are JavaScript, so rendered bodies must match `JSON.stringify` byte for byte:
//! keys in the order received, compact separators, JavaScript's string escapes, and ECMAScript
//! `Number::toString` for numbers (`1.0` → `1`, `1e21` → `1e+21`, `1e-7` → `1e-7`).

use serde_json::{Map, Number, Value};
use std::fmt::Write as _;

/// `JSON.stringify(value)` of a JSON value.
pub fn to_string(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

/// Appends `JSON.stringify(value)` to `out`.
pub fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => write_object(out, map),
    }
}

/// Appends `JSON.stringify(object)` to `out`.
pub fn write_object(out: &mut String, map: &Map<String, Value>) {
    out.push('{');
    for (i, (key, item)) in map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(out, key);
        out.push(':');
        write_value(out, item);
    }
    out.push('}');
}

/// `JSON.stringify(value, null, 2)`: each array item and object member on its own line, indented
/// two spaces per level, `"key": value` with one space; empty arrays and objects stay `[]`, `{}`.
pub fn to_string_pretty(value: &Value) -> String {
    let mut out = String::new();
    write_pretty(&mut out, value, 0);
    out
}

fn write_pretty(out: &mut String, value: &Value, depth: usize) {
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    };
    match value {
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                write_pretty(out, item, depth + 1);
            }
            newline(out, depth);
            out.push(']');
        }
        Value::Object(map) if !map.is_empty() => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                write_string(out, key);
                out.push_str(": ");
                write_pretty(out, item, depth + 1);
            }
            newline(out, depth);
            out.push('}');
        }
        other => write_value(out, other),
    }
}

/// Appends a JSON string literal with JavaScript's escapes: `"` `\\` `\b` `\f` `\n` `\r` `\t`,
/// other C0 controls as lowercase `\u00xx`; everything else (DEL, U+2028, emoji) verbatim.
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    while let Some(i) = next_to_escape(bytes, start) {
        out.push_str(&s[start..i]);
        let b = bytes[i];
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.push_str("\\u00");
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 0xF)]));
            }
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

fn needs_escape(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// True if some byte of `word` is below `n` (n ≤ 0x80); exact for "some", not for which.
const fn has_byte_below(word: u64, n: u8) -> bool {
    word.wrapping_sub(ONES * n as u64) & !word & HIGHS != 0
}

/// True if some byte of `word` needs an escape.
const fn word_needs_escape(word: u64) -> bool {
    has_byte_below(word, 0x20)
        || has_byte_below(word ^ (ONES * b'"' as u64), 1)
        || has_byte_below(word ^ (ONES * b'\\' as u64), 1)
}

/// Position of the first byte from `from` that `write_string` escapes. Most strings have none,
/// and most are short, so clean 8-byte words are skipped with a few word operations.
fn next_to_escape(bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while let Some(word) = bytes.get(i..i + 8) {
        if word_needs_escape(u64::from_le_bytes(word.try_into().expect("8 bytes"))) {
            break;
        }
        i += 8;
    }
    bytes[i..].iter().position(|&b| needs_escape(b)).map(|p| i + p)
}

/// Largest magnitude below which every integer is exactly representable as an f64 (2^53).
const MAX_SAFE: u64 = 1 << 53;

/// Appends a JSON number as JavaScript prints it. Integers beyond 2^53 go through f64, as they
/// would in JavaScript (`12345678901234567890` prints `12345678901234567000`).
pub fn write_number(out: &mut String, n: &Number) {
    if let Some(u) = n.as_u64() {
        if u <= MAX_SAFE {
            write_decimal(out, u);
            return;
        }
    } else if let Some(i) = n.as_i64() {
        if i.unsigned_abs() <= MAX_SAFE {
            out.push('-'); // as_u64 failed, so i < 0
            write_decimal(out, i.unsigned_abs());
            return;
        }
    }
    write_f64(out, n.as_f64().unwrap_or(0.0));
}

/// Appends `n` in decimal without going through `fmt` (renderers print a number per event).
pub fn write_decimal(out: &mut String, mut n: u64) {
    /// "00", "01", … "99".
    const PAIRS: [u8; 200] = {
        let mut pairs = [0u8; 200];
        let mut i = 0;
        while i < 100 {
            pairs[2 * i] = b'0' + (i / 10) as u8;
            pairs[2 * i + 1] = b'0' + (i % 10) as u8;
            i += 1;
        }
        pairs
    };
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        start -= 2;
        digits[start..start + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        start -= 2;
        digits[start..start + 2].copy_from_slice(&PAIRS[n as usize * 2..n as usize * 2 + 2]);
    } else {
        start -= 1;
        digits[start] = b'0' + n as u8;
    }
    // SAFETY: ASCII digits are valid UTF-8.
    unsafe { out.as_mut_vec() }.extend_from_slice(&digits[start..]);
}

/// Formats a number as a string the way ECMAScript's `Number::toString` does.
pub fn number_to_string(n: &Number) -> String {
    let mut out = String::new();
    write_number(&mut out, n);
    out
}

/// ECMAScript `Number::toString(x)` (ECMA-262 §6.1.6.1.20) for a finite or infinite f64.
pub fn write_f64(out: &mut String, x: f64) {
    if x.is_nan() {
        out.push_str("NaN");
        return;
    }
    if x == 0.0 {
        out.push('0'); // also -0, as JavaScript prints it
        return;
    }
    if x < 0.0 {
        out.push('-');
    }
    let x = x.abs();
    if x.is_infinite() {
        out.push_str("Infinity");
        return;
    }
    if (1e-6..1e21).contains(&x) {
        // Here ECMAScript writes the shortest round-trip digits without an exponent, as Rust's
        // `{}` does (and without `{:e}`'s string handling below, which is slower).
        let _ = write!(out, "{x}");
        return;
    }
    write_exponent_form(out, x);
}

/// `Number::toString` by its definition from the shortest digits; the fast path above agrees
/// with it (see the tests).
fn write_exponent_form(out: &mut String, x: f64) {
    // Rust's `{:e}` yields the shortest digits that round-trip, as ECMAScript requires.
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` always has an exponent");
    let exp: i32 = exp.parse().expect("`{:e}` exponent is an integer");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i32;
    let n = exp + 1; // value = 0.digits × 10^n
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if n > 0 { '+' } else { '-' });
        let _ = write!(out, "{}", (n - 1).abs());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pretty_is_json_stringify_with_two_spaces() {
        // As node prints JSON.stringify(v, null, 2) for the same value.
        let value = json!({"a": [1, 1.5e21, [], {}, {"b": null}], "": "x\n\u{2028}", "e": [[]]});
        assert_eq!(
            to_string_pretty(&value),
            "{\n  \"a\": [\n    1,\n    1.5e+21,\n    [],\n    {},\n    {\n      \"b\": null\n    }\n  ],\n  \"\": \"x\\n\u{2028}\",\n  \"e\": [\n    []\n  ]\n}"
        );
        assert_eq!(to_string_pretty(&json!([])), "[]");
        assert_eq!(to_string_pretty(&json!("s")), "\"s\"");
    }

    fn num(text: &str) -> String {
        let v: Value = serde_json::from_str(text).unwrap();
        to_string(&v)
    }

    #[test]
    fn numbers_print_as_ecmascript() {
        assert_eq!(num("1.0"), "1");
        assert_eq!(num("-0"), "0");
        assert_eq!(num("-0.0"), "0");
        assert_eq!(num("1e21"), "1e+21");
        assert_eq!(num("1e20"), "100000000000000000000");
        assert_eq!(num("123e-20"), "1.23e-18");
        assert_eq!(num("0.000001"), "0.000001");
        assert_eq!(num("0.0000001"), "1e-7");
        assert_eq!(num("1.5"), "1.5");
        assert_eq!(num("-2.5e-3"), "-0.0025");
        assert_eq!(num("0.1"), "0.1");
        assert_eq!(num("12345678901234567890"), "12345678901234567000");
        assert_eq!(num("-9007199254740993"), "-9007199254740992");
        assert_eq!(num("9007199254740992"), "9007199254740992");
        assert_eq!(num("1.7976931348623157e308"), "1.7976931348623157e+308");
        assert_eq!(num("5e-324"), "5e-324");
        assert_eq!(num("123456789012345680000"), "123456789012345680000");
    }

    #[test]
    fn strings_escape_as_javascript() {
        let v = json!("a\"b\\c\n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f}/\u{2028}😀");
        assert_eq!(to_string(&v), "\"a\\\"b\\\\c\\n\\r\\t\\b\\f\\u0001\\u001f\u{7f}/\u{2028}😀\"");
    }

    /// Escapes before, inside and after the 16-byte chunks the scan tests at once.
    #[test]
    fn long_strings_escape_at_every_position() {
        for c in ['"', '\\', '\n', '\u{1}', '\u{8}', '\u{1f}', '\u{7f}', 'é', '\u{2028}'] {
            for at in 0..40 {
                let s = format!("{}{c}{}{c}", "a".repeat(at), "b".repeat(40 - at));
                // serde_json escapes strings exactly as JSON.stringify does.
                assert_eq!(to_string(&json!(s)), serde_json::to_string(&s).unwrap(), "{c:?} at {at}");
            }
        }
    }

    #[test]
    fn plain_range_agrees_with_the_definition() {
        let mut x = 1e-6_f64;
        let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
        while x < 1e21 {
            for _ in 0..50 {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                let y = x * (1.0 + (seed >> 11) as f64 / (1u64 << 53) as f64 * 9.0);
                if y < 1e21 {
                    let (mut fast, mut general) = (String::new(), String::new());
                    write_f64(&mut fast, y);
                    write_exponent_form(&mut general, y);
                    assert_eq!(fast, general, "{y:e}");
                }
            }
            x *= 10.0;
        }
        for y in [1e-6, 0.1, 0.75, 1.0, 100.0, 123.456, 999_999_999_999_999_900_000.0] {
            let (mut fast, mut general) = (String::new(), String::new());
            write_f64(&mut fast, y);
            write_exponent_form(&mut general, y);
            assert_eq!(fast, general);
        }
    }

    #[test]
    fn integers_print_without_fmt() {
        for n in
            ["0", "7", "10", "99", "100", "101", "-1", "-10", "9007199254740992", "-9007199254740992", "1234567890"]
        {
            assert_eq!(num(n), n);
        }
        for n in (0..100_000).chain([u64::MAX / 3, 1 << 53]) {
            let mut out = String::new();
            write_decimal(&mut out, n);
            assert_eq!(out, n.to_string());
        }
    }

    #[test]
    fn objects_keep_key_order_and_compact_separators() {
        let v: Value = serde_json::from_str(r#"{"z": 1, "a": [true, null, {"m": "x"}], "b": {}}"#).unwrap();
        assert_eq!(to_string(&v), r#"{"z":1,"a":[true,null,{"m":"x"}],"b":{}}"#);
    }
}
