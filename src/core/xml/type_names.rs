//! How an unknown event type is written as the XML `type` attribute, unambiguously.
//!
//! The serializer writes known events under the seed's XML types (`human`, `ai`, `system`,
//! `tool_input`, `tool_output`, and the event types that keep their own name). An unknown event
//! type spelled like one of the XML-only names would read back as that XML type (an unknown
//! `human` as a user message), so such a type is written with the prefix `custom:`
//! (`type="custom:human"`). So that the prefix itself stays unambiguous, an unknown type that
//! already starts with `custom:` gets it too. Every other type is written as is, so documents
//! without such types keep their bytes.

use std::borrow::Cow;

/// Prefix marking a `type` attribute as an unknown event's own type name.
pub const UNKNOWN_TYPE_PREFIX: &str = "custom:";

/// XML types the serializer writes for known events under a name that is not an event type.
/// (The other XML types — `error`, `completion`, ... — are known event types, never unknown.)
pub const XML_ONLY_TYPES: [&str; 5] = ["human", "ai", "system", "tool_input", "tool_output"];

/// The `type` attribute for an unknown event type.
pub fn unknown_type_attribute(type_name: &str) -> Cow<'_, str> {
    if XML_ONLY_TYPES.contains(&type_name) || type_name.starts_with(UNKNOWN_TYPE_PREFIX) {
        Cow::Owned(format!("{UNKNOWN_TYPE_PREFIX}{type_name}"))
    } else {
        Cow::Borrowed(type_name)
    }
}

/// The unknown event type a prefixed `type` attribute names, if it has the prefix.
pub fn unknown_type_from_attribute(attribute: &str) -> Option<&str> {
    attribute.strip_prefix(UNKNOWN_TYPE_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_colliding_names_and_the_prefix_itself_are_prefixed() {
        for (name, written) in [
            ("plan", "plan"),
            ("approval", "approval"),
            ("human", "custom:human"),
            ("tool_output", "custom:tool_output"),
            ("custom:x", "custom:custom:x"),
            ("Human", "Human"),
            ("customer", "customer"),
        ] {
            assert_eq!(unknown_type_attribute(name), written);
            let back = unknown_type_from_attribute(written).unwrap_or(written);
            assert_eq!(back, name);
        }
    }
}
