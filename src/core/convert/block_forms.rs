//! Media parts that keep the form of the LangChain block they were made of (`messages/toEvents`
//! with `keepBlockForms`), so a history gives each block back as it was written: see
//! [`crate::messages::block_forms`], which reads them.

use super::media_blocks::{media_parts, Form};
use crate::media::ingest::split_exact;
use crate::messages::block_forms::BLOCK_FORM_KEY;
use serde_json::{json, Value};

/// `parts` (what [`media_parts`] made of `blocks`) with each media part keeping its block's form.
/// A block whose base64 would not read back the same keeps none (it comes back in the v1 form).
pub fn with_block_forms(blocks: &[Value], mut parts: Vec<Value>) -> Vec<Value> {
    let media_blocks = blocks
        .iter()
        .filter(|block| matches!(media_parts(std::slice::from_ref(block), Form::LangChain, ""), Ok(Some(_))));
    let media_parts = parts.iter_mut().filter(|part| part.get("type").and_then(Value::as_str) != Some("text"));
    for (block, part) in media_blocks.zip(media_parts) {
        if let Some(form) = form_of(block, part) {
            if let Value::Object(fields) = part {
                fields.insert(BLOCK_FORM_KEY.into(), form);
            }
        }
    }
    parts
}

/// `{block, at, prefix}` with the bytes' string emptied, or `{block}` for a block naming a URL.
fn form_of(block: &Value, part: &Value) -> Option<Value> {
    let Some(data) = part.get("data").and_then(Value::as_str) else {
        return part.get("url").is_some().then(|| json!({"block": block}));
    };
    let (prefix, _) = split_exact(data)?;
    let at = pointer_to(block, data, &mut String::new())?;
    let mut emptied = block.clone();
    *emptied.pointer_mut(&at)? = Value::String(String::new());
    Some(json!({"block": emptied, "at": at, "prefix": prefix}))
}

/// The JSON pointer of the first string in `value` that is `text`.
fn pointer_to(value: &Value, text: &str, at: &mut String) -> Option<String> {
    let step = |at: &mut String, key: &str, entry: &Value| {
        let len = at.len();
        at.push('/');
        at.push_str(&key.replace('~', "~0").replace('/', "~1"));
        let found = pointer_to(entry, text, at);
        at.truncate(len);
        found
    };
    match value {
        Value::String(found) if found == text => Some(at.clone()),
        Value::Array(entries) => entries.iter().enumerate().find_map(|(i, entry)| step(at, &i.to_string(), entry)),
        Value::Object(fields) => fields.iter().find_map(|(key, entry)| step(at, key, entry)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::block_forms::block_in_its_form;

    #[test]
    fn each_block_form_comes_back_from_its_part() {
        let blocks = json!([
            {"type": "text", "text": "see"},
            {"type": "image", "source_type": "base64", "data": "AAEC", "mime_type": "image/png"},
            {"type": "reasoning", "reasoning": "passed over"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAEC", "detail": "low"}},
            {"type": "image", "source_type": "url", "url": "https://x.test/a.png"},
        ]);
        let blocks = blocks.as_array().unwrap();
        let parts = media_parts(blocks, Form::LangChain, "content").unwrap().unwrap();
        let parts = with_block_forms(blocks, parts);
        let media: Vec<&Value> = parts.iter().filter(|p| p["type"] != "text").collect();
        assert_eq!(media.len(), 3);
        for (part, block) in media.iter().zip([&blocks[1], &blocks[3], &blocks[4]]) {
            let fields = part.as_object().unwrap();
            assert!(!fields[BLOCK_FORM_KEY].to_string().contains("AAEC"), "{part}");
            assert_eq!(block_in_its_form(fields, Some(&[0, 1, 2])).as_ref(), Some(block));
        }
        assert_eq!(block_in_its_form(media[0].as_object().unwrap(), None), None);
    }
}
