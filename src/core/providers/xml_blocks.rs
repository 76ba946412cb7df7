//! XML context mode in cacheable blocks: the `<thread>` document cut into text blocks
//! (Anthropic) or content parts (OpenAI) that a provider's prompt cache can match.
//!
//! A provider matches a cached prefix only where a block ends, so a document sent as one
//! block is new in every request that grows it. Here the document is cut where its
//! iterations begin, and whole iterations are grouped:
//!
//! - every iteration but the newest, grouped by a base-4 counter over their number: as many
//!   groups of 4^k iterations as the number's k-th digit, biggest first (at most 3 groups per
//!   power of four);
//! - the newest iteration on its own;
//! - the closing tag and the response prefix.
//!
//! So a thread of under 1,024 iterations goes out in at most 17 blocks.
//!
//! The blocks concatenate to the document byte for byte; the first holds `<thread>\n`. Event
//! lines never change once rendered, so a group stays the same until the next request's
//! counter merges it with the groups after it (4^k requests later for a group of 4^k): the
//! next request reads everything up to where it merges, or up to the newest iteration when it
//! does not. The blocks are a function of the document alone: `<` is escaped in every body,
//! so a line that starts with `  <event ` starts an event, and its `iteration` attribute
//! (attribute values are escaped fully) says which.
//!
//! Breakpoints go where the next request matches, as in standard mode: on the newest
//! iteration's block (the request's end, less the closing tag that an append moves), and,
//! when the next request's counter will merge groups, on the last group it keeps.

use memchr::memmem;

/// The document's first line.
const OPEN: &str = "<thread>\n";
/// What the counter groups by.
const BASE: usize = 4;

/// A document cut into blocks, and which of them carry a breakpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct XmlBlocks<'a> {
    pub blocks: Vec<&'a str>,
    /// Indices into `blocks`, the most useful first; at most two.
    pub breakpoints: Vec<usize>,
}

/// Cuts `document` (a `<thread>` document with its response prefix) into blocks.
pub fn split(document: &str) -> XmlBlocks<'_> {
    let units = iteration_starts(document);
    let Some(close) = close_start(document) else {
        return XmlBlocks { blocks: vec![document], breakpoints: Vec::new() };
    };
    if units.is_empty() {
        return XmlBlocks { blocks: vec![document], breakpoints: Vec::new() };
    }
    // Block ends, counted in iterations: the older iterations' groups, then the newest.
    let older = units.len() - 1;
    let ends = group_ends(older);
    let mut cuts: Vec<usize> = ends.iter().map(|&end| units[end]).collect();
    cuts.push(close);
    let mut blocks = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for &cut in &cuts {
        blocks.push(&document[start..cut]);
        start = cut;
    }
    blocks.push(&document[close..]);
    let newest = cuts.len() - 1;
    let mut breakpoints = vec![newest];
    // The next request groups one more iteration; where its groups stop matching these, it
    // reads up to the last group both have.
    let next = group_ends(older + 1);
    if !next.contains(&older) {
        if let Some(kept) = ends.iter().rposition(|end| next.contains(end)) {
            breakpoints.push(kept);
        }
    }
    XmlBlocks { blocks, breakpoints }
}

/// Where the groups of `count` iterations end (exclusive, in iterations), oldest first.
fn group_ends(count: usize) -> Vec<usize> {
    let mut sizes = Vec::new();
    let mut size = 1;
    let mut rest = count;
    while rest > 0 {
        sizes.extend(std::iter::repeat_n(size, rest % BASE));
        rest /= BASE;
        size *= BASE;
    }
    sizes.reverse();
    sizes
        .iter()
        .scan(0, |end, size| {
            *end += size;
            Some(*end)
        })
        .collect()
}

/// The byte offset of each iteration's first event line: where an event's `iteration`
/// differs from the one before it.
fn iteration_starts(document: &str) -> Vec<usize> {
    const LINE: &str = "  <event ";
    let mut starts = Vec::new();
    let mut previous: Option<&str> = None;
    let first = document.starts_with(OPEN) && document[OPEN.len()..].starts_with(LINE);
    let lines = memmem::find_iter(document.as_bytes(), "\n  <event ").map(|at| at + 1);
    for start in first.then_some(OPEN.len()).into_iter().chain(lines) {
        let iteration = iteration_of(&document[start..]);
        if starts.is_empty() || iteration != previous {
            starts.push(start);
        }
        previous = iteration;
    }
    starts
}

/// The `iteration` attribute of the event line `line` starts with.
fn iteration_of(line: &str) -> Option<&str> {
    const ATTRIBUTE: &str = " iteration=\"";
    let tag = &line[..memchr::memchr(b'>', line.as_bytes())?];
    let at = memmem::find(tag.as_bytes(), ATTRIBUTE.as_bytes())? + ATTRIBUTE.len();
    let value = &tag[at..];
    Some(&value[..memchr::memchr(b'"', value.as_bytes())?])
}

/// Where `</thread>` starts: the first line that begins with it (no body holds a `<`).
fn close_start(document: &str) -> Option<usize> {
    const CLOSE: &str = "</thread>";
    if document.starts_with(OPEN) && document[OPEN.len()..].starts_with(CLOSE) {
        return Some(OPEN.len());
    }
    memmem::find(document.as_bytes(), b"\n</thread>").map(|at| at + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::AgentEvent;
    use crate::xml::{XmlOptions, XmlRenderer};
    use proptest::prelude::*;

    fn document(iterations: &[u32], prefix: Option<&str>) -> String {
        let events: Vec<AgentEvent> = iterations
            .iter()
            .enumerate()
            .map(|(i, &it)| {
                let value = serde_json::json!({"type": "message", "role": "user", "content": format!("m{i} <a> \"q\"\n  <event x"), "iteration": it});
                AgentEvent::from_value(value, "event").unwrap()
            })
            .collect();
        let mut out = String::new();
        let options = XmlOptions { response_prefix: prefix.map(str::to_owned), ..Default::default() };
        XmlRenderer::render_document_into(&events, &options, &mut out);
        out
    }

    #[test]
    fn groups_follow_a_base_four_counter() {
        assert_eq!(group_ends(0), Vec::<usize>::new());
        assert_eq!(group_ends(3), vec![1, 2, 3]);
        assert_eq!(group_ends(4), vec![4]);
        assert_eq!(group_ends(23), vec![16, 20, 21, 22, 23]);
    }

    #[test]
    fn an_empty_document_is_one_block() {
        let doc = document(&[], Some("go"));
        assert_eq!(split(&doc), XmlBlocks { blocks: vec![doc.as_str()], breakpoints: vec![] });
    }

    #[test]
    fn iterations_are_cut_at_their_first_event_and_the_close_is_last() {
        let doc = document(&[0, 1, 1, 2], Some("Answer:"));
        let cut = split(&doc);
        assert_eq!(cut.blocks.len(), 4, "{:#?}", cut.blocks);
        assert!(cut.blocks[0].starts_with("<thread>\n  <event type=\"human\" id=\"0\""));
        assert!(cut.blocks[1].starts_with("  <event type=\"human\" id=\"1\"") && cut.blocks[1].contains("id=\"2\""));
        assert!(cut.blocks[2].starts_with("  <event type=\"human\" id=\"3\""));
        assert_eq!(cut.blocks[3], "</thread>\nAnswer:");
        // Two older iterations are two groups: the next request (three) adds a group.
        assert_eq!(cut.breakpoints, vec![2]);
        assert_eq!(cut.blocks.concat(), doc);
    }

    #[test]
    fn before_a_merge_the_last_kept_group_is_marked() {
        // Four older iterations after this one: 1+1+1 now, one group of 4 next.
        let doc = document(&[0, 1, 2, 3], None);
        let blocks = split(&doc);
        assert_eq!(blocks.blocks.len(), 5);
        assert_eq!(blocks.breakpoints, vec![3]);
        let doc = document(&[0, 1, 2, 3, 4, 5, 6, 7], None);
        // Seven older: 4 + 1 + 1 + 1; the next (eight) is 4 + 4, so the group of 4 is kept.
        assert_eq!(split(&doc).breakpoints, vec![4, 0]);
    }

    proptest! {
        // Each case renders every prefix of its thread.
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn blocks_join_to_the_document_and_the_next_request_matches_a_breakpoint(
            steps in proptest::collection::vec(1usize..4, 1..60),
            prefix in proptest::option::of("[a-z<>\n]{0,6}"),
        ) {
            let iterations: Vec<u32> =
                steps.iter().enumerate().flat_map(|(i, &n)| std::iter::repeat_n(i as u32, n)).collect();
            let mut previous: Option<(Vec<String>, Vec<usize>, usize)> = None;
            for end in 1..=iterations.len() {
                let doc = document(&iterations[..end], prefix.as_deref());
                let cut = split(&doc);
                prop_assert_eq!(cut.blocks.concat(), doc.clone());
                // Fewer than 64 older iterations: at most 3 groups per power of four below 64.
                prop_assert!(cut.blocks.len() <= 3 * 3 + 2, "{} blocks", cut.blocks.len());
                prop_assert!(!cut.breakpoints.is_empty() && cut.breakpoints.len() <= 2);
                prop_assert!(cut.breakpoints.iter().all(|&b| b + 1 < cut.blocks.len()));
                let blocks: Vec<String> = cut.blocks.iter().map(|b| b.to_string()).collect();
                let count = *iterations[..end].last().unwrap() as usize + 1;
                if let Some((before, marks, before_count)) = &previous {
                    let same = |b: usize| blocks.len() > b + 1 && before[..=b] == blocks[..=b];
                    if count == *before_count {
                        // The newest iteration grew: every group before it is the same.
                        prop_assert!(before.len() == blocks.len() && before[..before.len() - 2] == blocks[..blocks.len() - 2]);
                    } else {
                        // One more iteration: the request reads up to a breakpoint of the last,
                        // unless every older iteration merges into one group.
                        let merged_whole = group_ends(*before_count).len() == 1;
                        prop_assert!(merged_whole || marks.iter().any(|&b| same(b)), "{marks:?}: {before:#?} then {blocks:#?}");
                    }
                }
                previous = Some((blocks, cut.breakpoints.clone(), count));
            }
        }
    }
}
