//! Finding a request's id in the first bytes of a message too large to parse.
//!
//! An oversized frame is skipped unread, but the client still waits for an answer to it. The
//! id usually comes early (`{"jsonrpc":"2.0","id":7,...`), so the server looks for it in the
//! frame's first bytes and answers the limit error to that id when it finds one.

/// How many leading bytes of an oversized frame are searched for its id.
pub const SNIFF_BYTES: usize = 4096;

/// The raw JSON text of the top-level `"id"` member of a (possibly truncated) JSON object,
/// when it appears in `prefix` and is a string, a number or null.
pub fn sniff_id(prefix: &[u8]) -> Option<String> {
    let mut s = Scanner { bytes: prefix, pos: 0 };
    s.skip_ws();
    s.expect(b'{')?;
    loop {
        s.skip_ws();
        let key_start = s.pos;
        s.skip_string()?;
        let key = &prefix[key_start..s.pos];
        s.skip_ws();
        s.expect(b':')?;
        s.skip_ws();
        let value_start = s.pos;
        s.skip_value()?;
        if key == b"\"id\"" {
            let value = &prefix[value_start..s.pos];
            let valid = matches!(value.first(), Some(b'"' | b'-' | b'0'..=b'9')) || value == b"null";
            return valid.then(|| String::from_utf8_lossy(value).into_owned());
        }
        s.skip_ws();
        match s.next()? {
            b',' => continue,
            _ => return None,
        }
    }
}

struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Scanner<'_> {
    fn next(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    fn expect(&mut self, want: u8) -> Option<()> {
        (self.next()? == want).then_some(())
    }

    fn skip_ws(&mut self) {
        while matches!(self.bytes.get(self.pos), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn skip_string(&mut self) -> Option<()> {
        self.expect(b'"')?;
        loop {
            match self.next()? {
                b'\\' => {
                    self.next()?;
                }
                b'"' => return Some(()),
                _ => {}
            }
        }
    }

    /// Skips one value; `None` when the prefix ends inside it.
    fn skip_value(&mut self) -> Option<()> {
        match *self.bytes.get(self.pos)? {
            b'"' => self.skip_string(),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match *self.bytes.get(self.pos)? {
                        b'"' => {
                            self.skip_string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.pos += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.pos += 1;
                }
            }
            _ => {
                // A number or a literal: up to the next delimiter, which must be in the prefix.
                while !matches!(*self.bytes.get(self.pos)?, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                    self.pos += 1;
                }
                Some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sniff_id;

    #[test]
    fn finds_ids_of_every_shape_early_in_the_frame() {
        assert_eq!(sniff_id(br#"{"jsonrpc":"2.0","id":7,"method":"x","params":{"text":"#).as_deref(), Some("7"));
        assert_eq!(sniff_id(br#" { "id" : "a\"b" , "params": "#).as_deref(), Some(r#""a\"b""#));
        assert_eq!(sniff_id(br#"{"method":"m","params":{"id":1},"id":-2.5e3}"#).as_deref(), Some("-2.5e3"));
        assert_eq!(sniff_id(br#"{"jsonrpc":"2.0","id":null,"#).as_deref(), Some("null"));
    }

    #[test]
    fn gives_up_when_the_id_is_not_in_the_prefix_or_not_an_id() {
        assert_eq!(sniff_id(br#"{"jsonrpc":"2.0","method":"x","params":{"text":"aaaa"#), None);
        assert_eq!(sniff_id(br#"{"jsonrpc":"2.0","id":12"#), None, "a number cut off may be longer");
        assert_eq!(sniff_id(br#"[{"id":1}]"#), None);
        assert_eq!(sniff_id(br#"{"id":{"a":1}}"#), None);
        assert_eq!(sniff_id(b"garbage"), None);
    }
}
