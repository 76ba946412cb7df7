//! Recognising an LSP `Content-Length` header line in raw bytes, so the decoder can find where
//! the next frame starts after a bad one.
//!
//! The rule that makes this safe: a `Content-Length: N` line ended by a raw line feed can never
//! occur inside a valid JSON text. Outside strings the word is not JSON, and inside strings a raw
//! line feed is not allowed. So when such a line shows up inside what a frame claims is its
//! body, the claim is wrong and the line is the start of the next frame.

use memchr::memchr2_iter;

pub const CONTENT_LENGTH: &[u8] = b"content-length";

/// Most spaces or tabs accepted around the colon of a header line found inside a body.
const MAX_PADDING: usize = 8;
/// Most digits in a length (`usize::MAX` has 20).
const MAX_DIGITS: usize = 20;
/// Longest `Content-Length` line the look-back below can recognise, line feed included.
pub const MAX_HEADER_LINE: usize = CONTENT_LENGTH.len() + 2 * MAX_PADDING + 1 + MAX_DIGITS + 2;

/// Where `Content-Length: N` starts when the line feed at `newline` ends such a line; the whole
/// line must lie inside `buf`.
pub fn header_line_ending_at(buf: &[u8], newline: usize) -> Option<usize> {
    let mut i = newline;
    if i > 0 && buf[i - 1] == b'\r' {
        i -= 1;
    }
    let digits_end = i;
    while i > 0 && buf[i - 1].is_ascii_digit() && digits_end - i < MAX_DIGITS {
        i -= 1;
    }
    if i == digits_end {
        return None;
    }
    i = skip_padding_back(buf, i);
    if i == 0 || buf[i - 1] != b':' {
        return None;
    }
    i = skip_padding_back(buf, i - 1);
    let start = i.checked_sub(CONTENT_LENGTH.len())?;
    buf[start..i].eq_ignore_ascii_case(CONTENT_LENGTH).then_some(start)
}

fn skip_padding_back(buf: &[u8], mut i: usize) -> usize {
    let end = i;
    while i > 0 && matches!(buf[i - 1], b' ' | b'\t') && end - i < MAX_PADDING {
        i -= 1;
    }
    i
}

/// How far `bytes` goes towards a `Content-Length: N` line.
#[derive(Debug, PartialEq, Eq)]
pub enum HeaderPrefix {
    /// A whole line; the value is its length with the line feed.
    Complete(usize),
    /// Every byte fits, but the line is not finished.
    Partial,
    /// Not such a line.
    No,
}

/// Matches `bytes` from its start against `Content-Length[ \t]*:[ \t]*DIGITS\r?\n`.
pub fn header_prefix(bytes: &[u8]) -> HeaderPrefix {
    let name = CONTENT_LENGTH.len().min(bytes.len());
    if !bytes[..name].eq_ignore_ascii_case(&CONTENT_LENGTH[..name]) {
        return HeaderPrefix::No;
    }
    let mut i = name;
    let padding = |i: &mut usize| {
        let start = *i;
        while *i < bytes.len() && matches!(bytes[*i], b' ' | b'\t') && *i - start < MAX_PADDING {
            *i += 1;
        }
    };
    if i < bytes.len() {
        padding(&mut i);
        match bytes.get(i) {
            Some(b':') => i += 1,
            Some(_) => return HeaderPrefix::No,
            None => {}
        }
    }
    padding(&mut i);
    let digits_start = i;
    while i < bytes.len() && bytes[i].is_ascii_digit() && i - digits_start < MAX_DIGITS {
        i += 1;
    }
    if i == bytes.len() {
        return HeaderPrefix::Partial;
    }
    if i == digits_start {
        return HeaderPrefix::No;
    }
    if bytes[i] == b'\r' {
        i += 1;
    }
    match bytes.get(i) {
        Some(b'\n') => HeaderPrefix::Complete(i + 1),
        Some(_) => HeaderPrefix::No,
        None => HeaderPrefix::Partial,
    }
}

/// Where a `Content-Length` line that `body` does not finish could start: the earliest offset
/// in its last [`MAX_HEADER_LINE`] bytes from which the rest is a proper prefix of such a line.
pub fn unfinished_header_at_end(body: &[u8]) -> Option<usize> {
    let from = body.len().saturating_sub(MAX_HEADER_LINE);
    memchr2_iter(b'c', b'C', &body[from..])
        .map(|i| from + i)
        .find(|&start| header_prefix(&body[start..]) == HeaderPrefix::Partial)
}

/// The first `content-length` (any case) in `buf`.
pub fn find_content_length(buf: &[u8]) -> Option<usize> {
    memchr2_iter(b'c', b'C', buf).find(|&i| {
        buf.len() - i >= CONTENT_LENGTH.len() && buf[i..i + CONTENT_LENGTH.len()].eq_ignore_ascii_case(CONTENT_LENGTH)
    })
}

/// Length of the longest tail of `buf` that could begin a `content-length` still arriving.
pub fn partial_name_suffix(buf: &[u8]) -> usize {
    (1..CONTENT_LENGTH.len().min(buf.len() + 1))
        .rev()
        .find(|&n| buf[buf.len() - n..].eq_ignore_ascii_case(&CONTENT_LENGTH[..n]))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_back_from_a_line_feed() {
        let buf = b"{\"a\":1}Content-Length: 12\r\n";
        assert_eq!(header_line_ending_at(buf, buf.len() - 1), Some(7));
        assert_eq!(header_line_ending_at(b"content-length:3\n", 16), Some(0));
        assert_eq!(header_line_ending_at(b"Content-Length: \n", 16), None, "no digits");
        assert_eq!(header_line_ending_at(b"ontent-Length: 3\n", 16), None, "name cut off");
        assert_eq!(header_line_ending_at(b"Content-Type: 3\n", 15), None);
    }

    #[test]
    fn matches_prefixes_of_a_header_line() {
        assert_eq!(header_prefix(b"Content-Length: 12\r\n{}"), HeaderPrefix::Complete(20));
        assert_eq!(header_prefix(b"CONTENT-LENGTH:7\n"), HeaderPrefix::Complete(17));
        for partial in
            [&b"Conte"[..], b"Content-Length", b"Content-Length :", b"Content-Length: 12", b"content-length: 1\r"]
        {
            assert_eq!(header_prefix(partial), HeaderPrefix::Partial, "{:?}", String::from_utf8_lossy(partial));
        }
        for no in [&b"Contents"[..], b"Content-Length: x", b"Content-Length: 1\r\r", b"Content-Length\r\n"] {
            assert_eq!(header_prefix(no), HeaderPrefix::No, "{:?}", String::from_utf8_lossy(no));
        }
    }

    #[test]
    fn finds_an_unfinished_header_at_the_end_only() {
        assert_eq!(unfinished_header_at_end(b"{\"a\":1}Content-Len"), Some(7));
        assert_eq!(unfinished_header_at_end(b"{\"a\":1}Content-Length: 3\r"), Some(7));
        assert_eq!(unfinished_header_at_end(b"{\"c\":1}"), None);
        assert_eq!(unfinished_header_at_end(b"{\"a\":\"Content-Length: 3\"}"), None);
    }

    #[test]
    fn finds_names_and_their_beginnings() {
        assert_eq!(find_content_length(b"xx cONTENT-lENGTH: 1"), Some(3));
        assert_eq!(find_content_length(b"content-lengt"), None);
        assert_eq!(partial_name_suffix(b"garbage Conte"), 5);
        assert_eq!(partial_name_suffix(b"garbage"), 0);
    }
}
