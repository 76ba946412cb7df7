//! Reading the event elements out of a pre-serialized `<thread>` document, so they can be
//! spliced into another document with new `id`s.
//!
//! This reads exactly what the thread serializer writes: `<thread>`, then `<event ...>` elements
//! with double-quoted attributes (one of them `id`) and a text-only body, then `</thread>`.
//! Bodies may span lines; since they are escaped they never contain `<`, so the first
//! `</event>` ends an element. Anything else is not a thread we can splice, and the caller
//! falls back to treating the message as plain text.

use super::js_whitespace;
use std::ops::Range;

const OPEN: &str = "<thread>";
const CLOSE: &str = "</thread>";

/// True when `content`, after leading whitespace, starts with `<thread>` (upstream's test).
pub(super) fn looks_like_thread(content: &str) -> bool {
    js_whitespace::trim_start(content).starts_with(OPEN)
}

/// A `<thread>` document split into its event elements.
pub(super) struct ThreadDocument<'a> {
    pub events: Vec<EventElement<'a>>,
    /// What follows `</thread>`: the response prefix (with its leading newline), if any.
    pub trailer: &'a str,
}

/// One `<event ...>body</event>` element as written.
pub(super) struct EventElement<'a> {
    text: &'a str,
    /// Byte range of the `id` attribute's value within `text`.
    id: Range<usize>,
}

impl EventElement<'_> {
    /// Appends the element as one indented line of a thread document, with `id` replaced.
    pub fn write_line(&self, out: &mut String, id: usize) {
        use std::fmt::Write as _;
        out.push_str("  ");
        out.push_str(&self.text[..self.id.start]);
        let _ = write!(out, "{id}");
        out.push_str(&self.text[self.id.end..]);
        out.push('\n');
    }
}

/// Splits a document; `None` when `content` is not a thread in the serializer's form.
pub(super) fn split_thread(content: &str) -> Option<ThreadDocument<'_>> {
    let mut rest = js_whitespace::trim_start(content).strip_prefix(OPEN)?;
    let mut events = Vec::new();
    loop {
        rest = rest.trim_start_matches(is_xml_space);
        if let Some(trailer) = rest.strip_prefix(CLOSE) {
            return Some(ThreadDocument { events, trailer });
        }
        let (element, after) = split_event(rest)?;
        events.push(element);
        rest = after;
    }
}

/// Splits the leading `<event ...>body</event>` off `text`.
fn split_event(text: &str) -> Option<(EventElement<'_>, &str)> {
    let after_name = text.strip_prefix("<event")?;
    if !after_name.starts_with(is_xml_space) {
        return None;
    }
    let mut pos = text.len() - after_name.len();
    let mut id = None;
    // Attributes: name="value", separated by whitespace, up to the closing `>`.
    loop {
        pos += text[pos..].len() - text[pos..].trim_start_matches(is_xml_space).len();
        let rest = &text[pos..];
        if rest.starts_with('>') {
            pos += 1;
            break;
        }
        let name_len = rest.find(|c: char| c == '=' || is_xml_space(c) || "<>/\"'".contains(c))?;
        if name_len == 0 || !rest[name_len..].starts_with("=\"") {
            return None;
        }
        let value_start = pos + name_len + 2;
        let value_end = value_start + text[value_start..].find('"')?;
        if text[value_start..value_end].contains('<') {
            return None;
        }
        if &rest[..name_len] == "id" {
            if id.is_some() {
                return None;
            }
            id = Some(value_start..value_end);
        }
        pos = value_end + 1;
    }
    let body_len = text[pos..].find("</event>")?;
    if text[pos..pos + body_len].contains('<') {
        return None;
    }
    let end = pos + body_len + "</event>".len();
    Some((EventElement { text: &text[..end], id: id? }, &text[end..]))
}

fn is_xml_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relabel(content: &str, first_id: usize) -> Option<(String, String)> {
        let doc = split_thread(content)?;
        let mut out = String::new();
        for (i, event) in doc.events.iter().enumerate() {
            event.write_line(&mut out, first_id + i);
        }
        Some((out, doc.trailer.to_owned()))
    }

    #[test]
    fn rewrites_only_the_id_attribute() {
        let doc = "<thread>\n  <event type=\"tool_input\" id=\"0\" name=\"a id=\" call_id=\"7\" iteration=\"1\">{&quot;x&quot;:1}</event>\n  <event type=\"human\" id=\"1\" iteration=\"2\">two\nlines</event>\n</thread>\nNow:";
        let (lines, trailer) = relabel(doc, 5).unwrap();
        assert_eq!(
            lines,
            "  <event type=\"tool_input\" id=\"5\" name=\"a id=\" call_id=\"7\" iteration=\"1\">{&quot;x&quot;:1}</event>\n  <event type=\"human\" id=\"6\" iteration=\"2\">two\nlines</event>\n"
        );
        assert_eq!(trailer, "\nNow:");
    }

    #[test]
    fn accepts_the_empty_thread_and_attribute_order_of_other_writers() {
        assert_eq!(relabel(" \n<thread>\n</thread>", 0), Some((String::new(), String::new())));
        let (lines, _) = relabel("<thread><event id=\"9\" type=\"human\">hi</event></thread>", 3).unwrap();
        assert_eq!(lines, "  <event id=\"3\" type=\"human\">hi</event>\n");
    }

    #[test]
    fn rejects_what_the_serializer_never_writes() {
        for bad in [
            "<thread>\n  <event type=\"human\" id=\"0\" iteration=\"0\">open",
            "<thread>\n  <event type=\"human\" iteration=\"0\">no id</event>\n</thread>",
            "<thread>\n  <event type=\"human\" id=\"0\" id=\"1\">twice</event>\n</thread>",
            "<thread>\n  <event type='human' id='0'>single quotes</event>\n</thread>",
            "<thread>\n  <event type=\"human\" id=\"0\"><b>markup</b></event>\n</thread>",
            "<thread>\n  <event type=\"human\" id=\"0\"/>\n</thread>",
            "<thread>\n  text\n</thread>",
            "<thread>\n  <events type=\"human\" id=\"0\">x</events>\n</thread>",
            "<thread>",
        ] {
            assert!(split_thread(bad).is_none(), "{bad:?}");
        }
    }
}
