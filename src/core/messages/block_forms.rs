//! A LangChain content block given back in the very form it was written in: the `messages`
//! render of a media part made by `messages/toEvents` with `keepBlockForms`.
//!
//! Such a part keeps `langchainBlock: {block, at?, prefix?}`: the block as given, its bytes'
//! string emptied at the JSON pointer `at` (what stood before the base64, such as a data URL's
//! header, in `prefix`); a block that named a URL is kept whole, without `at`. The render puts
//! `prefix` + the blob's standard base64 back at `at`, so a v0.3 block (`source_type`, `data`)
//! or an older `image_url` block comes back as it was, not in the v1 form.

use crate::media::bytes::to_base64;
use serde_json::{Map, Value};

/// The part field that keeps the form of the block a part was made of.
pub const BLOCK_FORM_KEY: &str = "langchainBlock";

/// The block a part was made of, its bytes put back from `bytes`; `None` when the part kept no
/// form, or its bytes are not at hand.
pub fn block_in_its_form(part: &Map<String, Value>, bytes: Option<&[u8]>) -> Option<Value> {
    let form = part.get(BLOCK_FORM_KEY)?.as_object()?;
    let mut block = form.get("block")?.clone();
    if let Some(at) = form.get("at").and_then(Value::as_str) {
        let prefix = form.get("prefix").and_then(Value::as_str).unwrap_or_default();
        *block.pointer_mut(at)? = Value::String(format!("{prefix}{}", to_base64(bytes?)));
    }
    Some(block)
}
