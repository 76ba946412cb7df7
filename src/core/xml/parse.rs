//! Reading a `<thread>` document back into events: the inverse of [`serialize_thread_to_xml`].
//!
//! This module reads the XML (with quick-xml) into one [`XmlEvent`] per `<event>` element; the
//! mapping back to events, and the entry points, live in `to_events`.
//!
//! # Reading rules
//!
//! - The document is one `<thread>` element holding `<event>` elements whose bodies are text
//!   (character references, the five predefined entities and CDATA sections are accepted).
//!   An XML declaration, comments, processing instructions and whitespace between elements
//!   are ignored; anything else is an error.
//! - Whatever follows `</thread>` is the response prefix: the serializer writes it as
//!   `"\n" + prefix`, so one leading `\n` is removed. It is taken verbatim (it is not XML).
//! - Bodies and attribute values are read *literally*: references are resolved, but no
//!   end-of-line or attribute-value normalization is applied. A conforming XML 1.0 processor
//!   would turn `\r\n` and `\r` into `\n` in bodies and `\t`, `\n`, `\r` into spaces in
//!   attribute values. The serializer writes those characters raw (byte compatibility with the
//!   seed's reference forbids `&#13;`), so reading literally is what makes every document it
//!   writes come back unchanged.
//! - Characters XML 1.0 forbids are not rejected; the serializer never writes them.
//!
//! Errors carry a 1-based line and column (counted in characters) of the offending markup.
//!
//! [`serialize_thread_to_xml`]: super::serialize_thread_to_xml

use quick_xml::escape::{resolve_xml_entity, unescape_with};
use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::Reader;
use std::fmt;

/// A malformed document: what is wrong and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct XmlParseError {
    /// What is wrong, e.g. `expected <event>, found <item>`.
    pub message: String,
    /// 1-based line of the offending markup.
    pub line: usize,
    /// 1-based column, in characters, of the offending markup.
    pub column: usize,
    /// Byte offset of the offending markup in the input.
    pub offset: usize,
}

impl fmt::Display for XmlParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for XmlParseError {}

impl XmlParseError {
    /// An error at byte `offset` of `text`.
    pub(super) fn at(text: &str, offset: usize, message: impl Into<String>) -> Self {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &text[..offset];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        XmlParseError {
            message: message.into(),
            line: before.bytes().filter(|&b| b == b'\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
            offset,
        }
    }
}

/// One `<event>` element as read: attributes (unescaped, in document order) and body text.
#[derive(Clone, Debug)]
pub(super) struct XmlEvent {
    /// Byte offset of the element's `<`, for error messages.
    pub offset: usize,
    pub attributes: Vec<(String, String)>,
    pub body: String,
}

impl XmlEvent {
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// Reads the `<event>` elements of the document and returns them with the text after `</thread>`.
pub(super) fn read_xml_events(text: &str) -> Result<(Vec<XmlEvent>, &str), XmlParseError> {
    let mut reader = Reader::from_str(text);
    let mut events = Vec::new();
    let mut seen_thread = false;
    loop {
        let offset = position(&reader);
        match read(&mut reader, text)? {
            Event::Decl(_) | Event::Comment(_) | Event::PI(_) | Event::DocType(_) if !seen_thread => {}
            Event::Text(t) if !seen_thread && is_xml_whitespace(&t) => {}
            Event::Start(tag) if !seen_thread && tag.name().as_ref() == "thread" => seen_thread = true,
            Event::Empty(tag) if !seen_thread && tag.name().as_ref() == "thread" => {
                return Ok((events, &text[position(&reader)..]));
            }
            Event::Eof if !seen_thread => return Err(XmlParseError::at(text, offset, "no <thread> element")),
            _ if !seen_thread => {
                return Err(XmlParseError::at(text, offset, "expected <thread> at the start of the document"))
            }

            Event::Comment(_) | Event::PI(_) => {}
            Event::Text(t) if is_xml_whitespace(&t) => {}
            Event::Start(tag) if tag.name().as_ref() == "event" => {
                let attributes = attributes(text, offset, &tag)?;
                let body = read_body(&mut reader, text)?;
                events.push(XmlEvent { offset, attributes, body });
            }
            Event::Empty(tag) if tag.name().as_ref() == "event" => {
                let attributes = attributes(text, offset, &tag)?;
                events.push(XmlEvent { offset, attributes, body: String::new() });
            }
            Event::End(_) => return Ok((events, &text[position(&reader)..])),
            Event::Start(tag) | Event::Empty(tag) => {
                let message = format!("expected <event>, found <{}>", tag.name().as_ref());
                return Err(XmlParseError::at(text, offset, message));
            }
            Event::Eof => {
                return Err(XmlParseError::at(text, offset, "unexpected end of document: <thread> is not closed"))
            }
            Event::Decl(_) | Event::DocType(_) => {
                return Err(XmlParseError::at(text, offset, "unexpected declaration in <thread>"))
            }
            Event::Text(_) | Event::CData(_) | Event::GeneralRef(_) => {
                return Err(XmlParseError::at(text, offset, "unexpected text in <thread> outside an <event>"))
            }
        }
    }
}

/// Reads an `<event>` body up to its end tag.
fn read_body(reader: &mut Reader<&[u8]>, text: &str) -> Result<String, XmlParseError> {
    let mut body = String::new();
    loop {
        let offset = position(reader);
        match read(reader, text)? {
            // Literal text: no end-of-line normalization (see the module docs).
            Event::Text(t) => body.push_str(&t),
            Event::CData(t) => body.push_str(&t),
            Event::GeneralRef(r) => body.push_str(&resolve_reference(text, offset, &r)?),
            Event::Comment(_) | Event::PI(_) => {}
            Event::End(_) => return Ok(body),
            Event::Start(tag) | Event::Empty(tag) => {
                let message = format!("unexpected <{}> in an <event> body (bodies are text)", tag.name().as_ref());
                return Err(XmlParseError::at(text, offset, message));
            }
            Event::Eof => {
                return Err(XmlParseError::at(text, offset, "unexpected end of document: <event> is not closed"))
            }
            Event::Decl(_) | Event::DocType(_) => {
                return Err(XmlParseError::at(text, offset, "unexpected declaration in an <event> body"))
            }
        }
    }
}

fn read<'a>(reader: &mut Reader<&'a [u8]>, text: &str) -> Result<Event<'a>, XmlParseError> {
    reader.read_event().map_err(|e| XmlParseError::at(text, reader.error_position() as usize, e.to_string()))
}

fn position(reader: &Reader<&[u8]>) -> usize {
    reader.buffer_position() as usize
}

fn attributes(text: &str, offset: usize, tag: &BytesStart) -> Result<Vec<(String, String)>, XmlParseError> {
    let error = |message: String| XmlParseError::at(text, offset, message);
    tag.attributes()
        .map(|attribute| {
            let attribute = attribute.map_err(|e| error(format!("malformed attribute: {e}")))?;
            let key = attribute.key.as_ref().to_owned();
            // Literal value: references resolved, no attribute-value normalization.
            let value = unescape_with(&attribute.value, resolve_xml_entity)
                .map_err(|e| error(format!("attribute {key}: {e}")))?
                .into_owned();
            Ok((key, value))
        })
        .collect()
}

fn resolve_reference(text: &str, offset: usize, reference: &BytesRef) -> Result<String, XmlParseError> {
    if let Some(c) =
        reference.resolve_char_ref().map_err(|e| XmlParseError::at(text, offset, format!("&{};: {e}", &**reference)))?
    {
        return Ok(c.to_string());
    }
    resolve_xml_entity(reference)
        .map(str::to_owned)
        .ok_or_else(|| XmlParseError::at(text, offset, format!("unknown entity &{};", &**reference)))
}

fn is_xml_whitespace(text: &str) -> bool {
    text.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

#[cfg(test)]
mod tests {
    use super::super::{parse_thread_document, parse_thread_xml};
    use crate::event::AgentEvent;
    use serde_json::json;

    fn err(text: &str) -> String {
        parse_thread_xml(text).unwrap_err().to_string()
    }

    fn values(text: &str) -> serde_json::Value {
        serde_json::Value::Array(parse_thread_xml(text).unwrap().into_iter().map(AgentEvent::into_value).collect())
    }

    #[test]
    fn errors_name_line_and_column() {
        assert_eq!(err(""), "line 1, column 1: no <thread> element");
        assert_eq!(err("<thread>\n  <item/>\n</thread>"), "line 2, column 3: expected <event>, found <item>");
        assert_eq!(
            err("<thread>\n  <event type=\"human\" id=\"0\" iteration=\"0\">x</evnt>\n</thread>"),
            "line 2, column 45: ill-formed document: expected `</event>`, but `</evnt>` was found"
        );
        assert_eq!(
            err("<thread>\n  <event type=\"human\" iteration=\"0\">a<b/></event>\n</thread>"),
            "line 2, column 38: unexpected <b> in an <event> body (bodies are text)"
        );
        assert_eq!(
            err("<thread>\n  <event"),
            "line 2, column 3: syntax error: tag not closed: `>` not found before end of input"
        );
        assert_eq!(
            err("<thread>\n  <event type=\"human\" iteration=\"0\">é &nbsp;</event></thread>"),
            "line 2, column 39: unknown entity &nbsp;"
        );
        assert_eq!(err("<thread>\n"), "line 2, column 1: unexpected end of document: <thread> is not closed");
        assert_eq!(err("hello"), "line 1, column 1: expected <thread> at the start of the document");
        assert_eq!(err("<thread>stray</thread>"), "line 1, column 9: unexpected text in <thread> outside an <event>");
    }

    #[test]
    fn bodies_and_attributes_are_read_literally() {
        let text = "<thread>\r\n  <event type=\"human\" id=\"0\" iteration=\"0\">a\r\nb\rc&#13;&#x1F600;<![CDATA[<&>]]></event>\r\n  <event type=\"tool_input\" id=\"1\" name=\"t&#9;\nx\" iteration=\"0\">{}</event>\r\n</thread>";
        assert_eq!(
            values(text),
            json!([
                {"type":"message","role":"user","content":"a\r\nb\rc\r😀<&>","iteration":0},
                {"type":"tool_call","toolName":"t\t\nx","toolCallId":"call_1","args":{},"iteration":0},
            ])
        );
    }

    #[test]
    fn declaration_comments_and_self_closing_elements_are_accepted() {
        let text = "<?xml version=\"1.0\"?>\n<!-- c --><thread><event type=\"ai\" iteration=\"2\"/><!-- c --></thread>";
        assert_eq!(values(text), json!([{"type":"message","role":"assistant","content":"","iteration":2}]));
        assert_eq!(values("<thread/>"), json!([]));
    }

    #[test]
    fn response_prefix_is_the_text_after_the_closing_tag() {
        let doc = |t: &str| parse_thread_document(t).unwrap().response_prefix;
        assert_eq!(doc("<thread>\n</thread>"), None);
        assert_eq!(doc("<thread>\n</thread>\n"), None);
        assert_eq!(doc("<thread>\n</thread>\nBased on <the> & above"), Some("Based on <the> & above".into()));
        assert_eq!(doc("<thread>\n</thread>\n\n ai_response:"), Some("\n ai_response:".into()));
        assert_eq!(doc("<thread>\n</thread>next"), Some("next".into()));
    }
}
