//! A Pydantic AI content list given back in the shapes `pydanticAi/toEvents` kept: each item
//! with its bytes (base64 `data`) or `url` put back ([`crate::convert`]'s Pydantic AI media
//! reader keeps them without).

use super::media_parts::{Carried, Piece};
use crate::media::bytes::to_base64;
use serde_json::Value;

/// The content list of `pieces` (one per part) in the kept `shapes`; a piece whose shape is
/// `null`, or whose bytes are not at hand, goes as `fallback` makes it.
pub fn content(pieces: Vec<Piece<'_>>, shapes: &[Value], fallback: impl Fn(Piece<'_>) -> Option<Value>) -> Value {
    let items = pieces.into_iter().enumerate().filter_map(|(i, piece)| {
        match (shapes.get(i).and_then(Value::as_object), &piece) {
            (Some(shape), Piece::Media(_, carried)) => {
                let mut item = shape.clone();
                match carried {
                    Carried::Bytes(bytes) => item.insert("data".into(), Value::from(to_base64(bytes))),
                    Carried::Url(url) => item.insert("url".into(), Value::from(*url)),
                };
                Some(Value::Object(item))
            }
            (Some(shape), Piece::Text(text)) if shape.get("kind").and_then(Value::as_str) == Some("text-content") => {
                let mut item = shape.clone();
                item.insert("content".into(), Value::from(text.as_ref()));
                Some(Value::Object(item))
            }
            _ => fallback(piece),
        }
    });
    Value::Array(items.collect())
}
