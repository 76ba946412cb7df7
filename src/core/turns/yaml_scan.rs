//! A linear pre-scan of YAML text for flow nesting (`[`, `{`).
//!
//! libyaml's scanner does work proportional to the flow nesting level for every token, so
//! text like `{a: {a: {a: ...` 40,000 levels deep costs it tens of seconds before any depth
//! limit can see a value. This scan finds the deepest flow nesting in one pass, so such text
//! is refused first. It follows YAML's tokenization closely enough to skip brackets that are
//! text: inside quotes, comments, block scalars (`|`, `>`) and plain scalars. Where it cannot
//! be sure whether a line is text it scans it, which can only over-count (and refuse), never
//! let deep nesting through.

/// The deepest flow nesting in `text`, counting no further than `stop_above + 1`.
pub(super) fn max_flow_depth(text: &str, stop_above: usize) -> usize {
    let mut scan = Scan { b: text.as_bytes(), i: 0, line_start: 0, indents: Vec::new(), deepest: 0, stop_above };
    scan.run();
    scan.deepest
}

struct Scan<'a> {
    b: &'a [u8],
    i: usize,
    line_start: usize,
    /// Columns of the open block collections, innermost last.
    indents: Vec<usize>,
    deepest: usize,
    stop_above: usize,
}

/// What the rest of a line tells about the following lines.
enum Carry {
    None,
    /// A block scalar (`|`, `>`) started: following lines indented more than this column, or
    /// blank, are its text.
    BlockScalar(isize),
    /// A plain scalar ended the line: following lines indented more than this column, or
    /// blank, continue it, up to a comment.
    PlainScalar(isize),
}

impl Scan<'_> {
    fn run(&mut self) {
        if self.b.starts_with("\u{feff}".as_bytes()) {
            self.i = 3;
        }
        let mut carry = Carry::None;
        while self.i < self.b.len() && self.deepest <= self.stop_above {
            self.line_start = self.i;
            let indent = self.b[self.i..].iter().take_while(|&&c| c == b' ').count();
            self.i += indent;
            let text_line = match carry {
                Carry::None => false,
                Carry::BlockScalar(column) => self.rest_of_line_is_blank() || indent as isize > column,
                Carry::PlainScalar(column) => {
                    let starts_comment = self.b.get(self.i) == Some(&b'#');
                    self.rest_of_line_is_blank() || (indent as isize > column && !starts_comment)
                }
            };
            if text_line {
                self.skip_line();
                continue;
            }
            carry = self.line(indent);
        }
    }

    /// Scans the tokens of one block-context line starting at its first non-space byte.
    fn line(&mut self, first_column: usize) -> Carry {
        // Block collections indented deeper than this line have ended (libyaml's unroll).
        while self.indents.last().is_some_and(|&top| top > first_column) {
            self.indents.pop();
        }
        // Start column of the node being read, for a key that turns out to end in `: `.
        let mut node_start: Option<usize> = None;
        loop {
            if self.deepest > self.stop_above {
                self.i = self.b.len();
                return Carry::None;
            }
            self.skip_blanks();
            let Some(&c) = self.b.get(self.i) else { return Carry::None };
            if self.break_len(self.i) > 0 {
                self.skip_line();
                return Carry::None;
            }
            let column = self.i - self.line_start;
            let next_is_blank = self.is_blank_or_break(self.i + 1);
            match c {
                b'#' => {
                    self.skip_line();
                    return Carry::None;
                }
                b'%' if column == 0 => {
                    self.skip_line();
                    return Carry::None;
                }
                b'-' | b'.'
                    if column == 0
                        && self.b[self.i..].starts_with(if c == b'-' { b"---" } else { b"..." })
                        && self.is_blank_or_break(self.i + 3) =>
                {
                    self.i += 3;
                }
                b'-' | b'?' if next_is_blank => {
                    self.open(column);
                    node_start = None;
                    self.i += 1;
                }
                b':' if next_is_blank => {
                    self.open(node_start.unwrap_or(column));
                    node_start = None;
                    self.i += 1;
                }
                b'|' | b'>' => {
                    self.skip_line();
                    return Carry::BlockScalar(self.indent());
                }
                b'[' | b'{' => {
                    node_start.get_or_insert(column);
                    self.flow();
                }
                b'\'' | b'"' => {
                    node_start.get_or_insert(column);
                    self.quoted(c);
                }
                b'&' | b'!' | b'*' => {
                    node_start.get_or_insert(column);
                    while !self.is_blank_or_break(self.i) {
                        self.i += 1;
                    }
                }
                _ => {
                    // A plain scalar: up to `: `, ` #` or the end of the line.
                    let start = *node_start.get_or_insert(column);
                    loop {
                        if self.i >= self.b.len() || self.break_len(self.i) > 0 {
                            self.skip_line();
                            return Carry::PlainScalar(self.indent());
                        }
                        let c = self.b[self.i];
                        if c == b':' && self.is_blank_or_break(self.i + 1) {
                            self.open(start);
                            node_start = None;
                            self.i += 1;
                            break;
                        }
                        if (c == b' ' || c == b'\t') && self.b.get(self.i + 1) == Some(&b'#') {
                            self.skip_line();
                            return Carry::None;
                        }
                        self.i += 1;
                    }
                }
            }
        }
    }

    /// A block collection entry (key, `-`, `?`) at `column`: deeper than the current
    /// collection, it opens a new one (libyaml's roll).
    fn open(&mut self, column: usize) {
        if self.indents.last().is_none_or(|&top| column > top) {
            self.indents.push(column);
        }
    }

    /// The indentation of the innermost open block collection; -1 at the top level. Lines of a
    /// multi-line scalar are indented beyond it.
    fn indent(&self) -> isize {
        self.indents.last().map_or(-1, |&top| top as isize)
    }

    /// Scans a flow collection from its opening bracket to the matching close.
    fn flow(&mut self) {
        let mut level = 0usize;
        let mut in_plain = false;
        while self.i < self.b.len() {
            let len = self.break_len(self.i);
            if len > 0 {
                self.i += len;
                self.line_start = self.i;
                continue;
            }
            let c = self.b[self.i];
            match c {
                b' ' | b'\t' => self.i += 1,
                b'#' if self.i == self.line_start || matches!(self.b[self.i - 1], b' ' | b'\t') => self.skip_to_break(),
                b'[' | b'{' => {
                    level += 1;
                    self.deepest = self.deepest.max(level);
                    if self.deepest > self.stop_above {
                        return;
                    }
                    in_plain = false;
                    self.i += 1;
                }
                b']' | b'}' => {
                    level = level.saturating_sub(1);
                    in_plain = false;
                    self.i += 1;
                    if level == 0 {
                        return;
                    }
                }
                b',' => {
                    in_plain = false;
                    self.i += 1;
                }
                // A value indicator: `: `, or `:` right after a quoted key (`"a":"b"`).
                b':' if !in_plain
                    || self.is_blank_or_break(self.i + 1)
                    || matches!(self.b.get(self.i + 1), Some(b',' | b'[' | b']' | b'{' | b'}')) =>
                {
                    in_plain = false;
                    self.i += 1;
                }
                b'\'' | b'"' if !in_plain => self.quoted(c),
                _ => {
                    in_plain = true;
                    self.i += 1;
                }
            }
        }
    }

    /// Skips a quoted scalar starting at its opening quote, across lines.
    fn quoted(&mut self, quote: u8) {
        self.i += 1;
        while self.i < self.b.len() {
            let len = self.break_len(self.i);
            if len > 0 {
                self.i += len;
                self.line_start = self.i;
                continue;
            }
            let c = self.b[self.i];
            if quote == b'"' && c == b'\\' {
                self.i += 1;
                if self.break_len(self.i) == 0 {
                    self.i += 1;
                }
            } else if c == quote {
                self.i += 1;
                if quote == b'\'' && self.b.get(self.i) == Some(&b'\'') {
                    self.i += 1;
                } else {
                    return;
                }
            } else {
                self.i += 1;
            }
        }
    }

    fn skip_blanks(&mut self) {
        while matches!(self.b.get(self.i), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    fn skip_to_break(&mut self) {
        while self.i < self.b.len() && self.break_len(self.i) == 0 {
            self.i += 1;
        }
    }

    /// Skips the rest of the line and its line break.
    fn skip_line(&mut self) {
        self.skip_to_break();
        self.i += self.break_len(self.i);
    }

    fn rest_of_line_is_blank(&self) -> bool {
        let mut j = self.i;
        while matches!(self.b.get(j), Some(b' ' | b'\t')) {
            j += 1;
        }
        j >= self.b.len() || self.break_len(j) > 0
    }

    fn is_blank_or_break(&self, j: usize) -> bool {
        j >= self.b.len() || matches!(self.b[j], b' ' | b'\t') || self.break_len(j) > 0
    }

    /// Length of the line break at `j` (0 if none): `\r\n`, `\n`, `\r`, and the Unicode
    /// breaks libyaml also honours (NEL, LS, PS).
    fn break_len(&self, j: usize) -> usize {
        match &self.b[j.min(self.b.len())..] {
            [b'\r', b'\n', ..] => 2,
            [b'\n' | b'\r', ..] => 1,
            [0xC2, 0x85, ..] => 2,
            [0xE2, 0x80, 0xA8 | 0xA9, ..] => 3,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::max_flow_depth;

    fn depth(text: &str) -> usize {
        max_flow_depth(text, 1000)
    }

    #[test]
    fn counts_flow_nesting() {
        assert_eq!(depth("a: [[1], {b: [2]}]\n"), 3);
        assert_eq!(depth("[[[[]]]]"), 4);
        assert_eq!(depth("- {a: 1}\n- [x, [y]]\n"), 2);
        assert_eq!(depth("a:\n  - [\n    [1,\n     2]]\n"), 2);
        assert_eq!(depth("\"k\": [1]\n"), 1);
    }

    #[test]
    fn brackets_in_text_do_not_count() {
        assert_eq!(depth("a: b[[[c\n"), 0);
        assert_eq!(depth("a: '[[[' # [[[\n"), 0);
        assert_eq!(depth("a: \"[[\\\"[\"\n"), 0);
        assert_eq!(depth("a: |\n  {\n    \"x\": [[[\n  }\nb: [1]\n"), 1);
        assert_eq!(depth("- >-\n   [[[\n\n   [[\n- [2]\n"), 1);
        assert_eq!(depth("- a: |\n    [[[\n  b: [[1]]\n"), 2);
        assert_eq!(depth("a: it's\n  [[[ continued\nb: {}\n"), 1);
        assert_eq!(depth("  top level\n[[[ continued\n"), 0);
        assert_eq!(depth("|\n  # [\n  [1, [2]]\n"), 0);
        assert_eq!(depth("a:\n  b: x\n   [[ continued\n  c: [1]\n"), 1);
        assert_eq!(depth("[it's, [x]]"), 2);
        assert_eq!(depth("{\"id\": \"{\", \"b\":\"[\", c: [a\"b{\"]}"), 3);
        assert_eq!(depth("{\"id\": \"{\", \"b\":\"[\", c: [a\"b\"]}"), 2);
    }

    #[test]
    fn text_cannot_hide_nesting() {
        let deep = "[".repeat(50);
        // A block scalar ends at the first line not indented beyond its key.
        assert_eq!(depth(&format!("a: |\n  x\nb: {deep}\n")), 50);
        // Carriage returns and Unicode line breaks end lines too.
        assert_eq!(depth(&format!("a: |\r  x\rb: {deep}\r")), 50);
        assert_eq!(depth(&format!("a: |\u{2028}  x\u{2028}b: {deep}\u{2028}")), 50);
        // A plain value after a flow key continues only on deeper lines.
        assert_eq!(depth(&format!("[k]: v\nb: {deep}\n")), 50);
        assert_eq!(depth(&format!("- [k]: v\n  b: {deep}\n")), 50);
        assert_eq!(depth(&format!("- &a k: |\n    x\n  b: {deep}\n")), 50);
        // An unterminated quote hides nothing from the scan that the parser would read.
        assert_eq!(depth(&format!("a: b'c\nd: {deep}\n")), 50);
    }

    #[test]
    fn stops_counting_past_the_limit() {
        assert_eq!(max_flow_depth(&"{a: ".repeat(100_000), 100), 101);
    }
}
