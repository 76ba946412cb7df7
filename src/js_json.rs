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

/// Appends a JSON string literal with JavaScript's escapes: `"` `\\` `\b` `\f` `\n` `\r` `\t`,
/// other C0 controls as lowercase `\u00xx`; everything else (DEL, U+2028, emoji) verbatim.
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0x00..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{:04x}", b);
        } else {
            out.push_str(escape);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Largest magnitude below which every integer is exactly representable as an f64 (2^53).
const MAX_SAFE: u64 = 1 << 53;

/// Appends a JSON number as JavaScript prints it. Integers beyond 2^53 go through f64, as they
/// would in JavaScript (`12345678901234567890` prints `12345678901234567000`).
pub fn write_number(out: &mut String, n: &Number) {
    if let Some(u) = n.as_u64() {
        if u <= MAX_SAFE {
            let _ = write!(out, "{u}");
            return;
        }
    } else if let Some(i) = n.as_i64() {
        if i.unsigned_abs() <= MAX_SAFE {
            let _ = write!(out, "{i}");
            return;
        }
    }
    write_f64(out, n.as_f64().unwrap_or(0.0));
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

    #[test]
    fn objects_keep_key_order_and_compact_separators() {
        let v: Value = serde_json::from_str(r#"{"z": 1, "a": [true, null, {"m": "x"}], "b": {}}"#).unwrap();
        assert_eq!(to_string(&v), r#"{"z":1,"a":[true,null,{"m":"x"}],"b":{}}"#);
    }
}
