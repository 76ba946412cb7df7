//! Where prompt-caching breakpoints go in a conversation of blocks, for APIs that cache the way
//! Anthropic's does (a hit is a cached prefix ending on a block boundary at a breakpoint or at
//! most [`LOOKBACK_BLOCKS`] blocks before one; at most [`MAX_BREAKPOINTS`] a request).
//!
//! The rules of [`super::anthropic::place_breakpoints`], told over a flat list of blocks: both
//! Anthropic's blocks and Bedrock's `cachePoint` blocks are placed by [`anchors`].

pub use super::anthropic::{LOOKBACK_BLOCKS, MAX_BREAKPOINTS};

/// One block of the conversation, as placement sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockSpot {
    /// Which message it is in.
    pub message: usize,
    /// Whether a breakpoint may end on it (not an empty result, not reasoning).
    pub markable: bool,
}

/// The blocks (indices into `blocks`) to mark, at most `left`: the last markable block, the
/// last markable one before the newest assistant turn (`newest_assistant`, a message index)
/// unless the first one's lookback reaches it, then going back so the lookbacks join up.
pub fn anchors(blocks: &[BlockSpot], newest_assistant: Option<usize>, left: usize) -> Vec<usize> {
    let last_markable_at_or_before = |end: usize| (0..=end).rev().find(|&at| blocks[at].markable);
    let Some(last) = blocks.len().checked_sub(1).and_then(last_markable_at_or_before) else { return Vec::new() };
    if left == 0 {
        return Vec::new();
    }
    let mut anchors = vec![last];
    let mut reach = last.saturating_sub(LOOKBACK_BLOCKS - 1);
    let before_newest_turn = newest_assistant
        .and_then(|m| blocks.iter().position(|spot| spot.message == m))
        .and_then(|first| first.checked_sub(1))
        .and_then(last_markable_at_or_before);
    if let Some(at) = before_newest_turn.filter(|&at| at < reach && anchors.len() < left) {
        anchors.push(at);
        reach = at.saturating_sub(LOOKBACK_BLOCKS - 1);
    }
    while anchors.len() < left && reach > 0 {
        let Some(at) = last_markable_at_or_before(reach - 1) else { break };
        anchors.push(at);
        reach = at.saturating_sub(LOOKBACK_BLOCKS - 1);
    }
    anchors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spots(n: usize) -> Vec<BlockSpot> {
        (0..n).map(|i| BlockSpot { message: i, markable: true }).collect()
    }

    #[test]
    fn a_short_conversation_gets_its_last_block() {
        assert_eq!(anchors(&spots(5), Some(3), 3), vec![4]);
    }

    #[test]
    fn a_long_one_gets_joined_lookbacks_and_never_more_than_left() {
        assert_eq!(anchors(&spots(100), None, 3), vec![99, 79, 59]);
        assert_eq!(anchors(&spots(100), Some(50), 3), vec![99, 49, 29]);
    }

    #[test]
    fn unmarkable_blocks_are_skipped() {
        let mut blocks = spots(3);
        blocks[2].markable = false;
        assert_eq!(anchors(&blocks, None, 4), vec![1]);
        assert!(anchors(&[], None, 4).is_empty());
    }
}
