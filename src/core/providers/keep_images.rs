//! `options.media.keepImages`: a long run's renders carry the bytes of its newest images only,
//! the older ones as the placeholder text every render without bytes shows.
//!
//! The frontier (how many of the oldest images go as placeholders) moves in steps, so a cached
//! prompt prefix breaks at most once per `N` new images: with `T` images in the rendering, it is
//! `0` while `T ≤ 2N`, and `(N + 1) · ⌊(T − N) / (N + 1)⌋` after. The images with bytes then
//! float between `N` and `2N`: when a new one would make `2N + 1`, the frontier moves so that
//! exactly `N` remain. Between two moves the frontier stands still, so everything before it
//! renders byte for byte as before.
//!
//! Images are counted across the rendering, in order: every `image` part of a message or a
//! tool result, whatever its source (blob or URL), with its bytes at hand or not, so the
//! frontier depends on the thread alone. Files and audio are never counted nor replaced.
//!
//! This runs once, on the rendering's entries (or, in XML context mode, on the media that
//! follow the document), before any format writes its request; counts of those renders
//! ([`crate::context::media_tokens`]) use the same frontier.

use crate::media::{MediaKind, Part};
use crate::messages::{Entry, MessageRef, StoredMessage};
use serde_json::{json, Value};
use std::borrow::Cow;
use std::num::NonZeroU32;

/// `options.media.keepImages`: how many of the newest images a render carries at least.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeepImages(NonZeroU32);

impl KeepImages {
    /// The most a render may be asked to keep (a request then holds at most twice as many).
    pub const MAX: u32 = 10_000;

    /// `None` unless `1 ≤ keep ≤ MAX`.
    pub fn new(keep: u64) -> Option<KeepImages> {
        let keep = u32::try_from(keep).ok().filter(|&keep| keep <= Self::MAX)?;
        NonZeroU32::new(keep).map(KeepImages)
    }

    pub fn get(self) -> usize {
        self.0.get() as usize
    }

    /// How many of the oldest of `total` images go as placeholders.
    pub fn frontier(self, total: usize) -> usize {
        let keep = self.get();
        let step = keep + 1;
        step * (total.saturating_sub(keep) / step)
    }
}

/// Whether `part` is an image part.
pub fn is_image(part: &Value) -> bool {
    matches!(Part::of(part), Part::Media(media) if media.kind == MediaKind::Image)
}

fn images_in(message: &StoredMessage) -> usize {
    message.data.content.parts().map_or(0, |parts| parts.iter().filter(|part| is_image(part)).count())
}

/// `parts` with their first `*hide` images as text parts holding their placeholders (the text
/// every render writes for a media part it does not carry); `*hide` counts down.
fn hide_images(parts: &[Value], hide: &mut usize) -> Vec<Value> {
    parts
        .iter()
        .map(|part| match Part::of(part) {
            Part::Media(media) if *hide > 0 && media.kind == MediaKind::Image => {
                *hide -= 1;
                json!({"type": "text", "text": media.placeholder()})
            }
            _ => part.clone(),
        })
        .collect()
}

/// The entries with the images before the frontier as placeholders; `None` when the frontier
/// is at the start (nothing changes).
pub fn apply<'a>(entries: &[Entry<'a>], keep: KeepImages) -> Option<Vec<Entry<'a>>> {
    let total = entries.iter().filter_map(Entry::message).map(images_in).sum();
    let mut hide = keep.frontier(total);
    if hide == 0 {
        return None;
    }
    Some(
        entries
            .iter()
            .map(|entry| match entry {
                Entry::Message(message) if hide > 0 && images_in(message) > 0 => {
                    let parts = message.data.content.parts().expect("a message with images has parts");
                    let mut made = StoredMessage::clone(message);
                    made.data.content = crate::messages::Content::Parts(hide_images(parts, &mut hide).into());
                    Entry::Message(MessageRef::Made(Box::new(made)))
                }
                other => other.clone(),
            })
            .collect(),
    )
}

/// [`apply`] when `keep` is set and moves the frontier; else the entries as they are.
pub fn apply_or_keep<'a>(entries: Vec<Entry<'a>>, keep: Option<KeepImages>) -> Vec<Entry<'a>> {
    keep.and_then(|keep| apply(&entries, keep)).unwrap_or(entries)
}

/// The media that follow an XML document (each blob once, in order) without the images before
/// the frontier: the document already names every part by its placeholder.
pub fn after_document(named: &[Value], keep: Option<KeepImages>) -> Cow<'_, [Value]> {
    let Some(keep) = keep else { return Cow::Borrowed(named) };
    let mut hide = keep.frontier(named.iter().filter(|part| is_image(part)).count());
    if hide == 0 {
        return Cow::Borrowed(named);
    }
    Cow::Owned(
        named
            .iter()
            .filter(|part| {
                let drop = hide > 0 && is_image(part);
                hide -= usize::from(drop);
                !drop
            })
            .cloned()
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frontier_moves_in_steps_keeping_n_to_2n() {
        let keep = KeepImages::new(3).unwrap();
        let frontiers: Vec<usize> = (0..=12).map(|total| keep.frontier(total)).collect();
        assert_eq!(frontiers, [0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4, 8, 8]);
        for total in 0..500 {
            let kept = total - keep.frontier(total);
            assert!(kept <= 6 && (total < 3 || kept >= 3), "{total}: {kept}");
        }
    }

    #[test]
    fn keep_is_a_positive_integer_up_to_the_maximum() {
        assert!(KeepImages::new(0).is_none());
        assert!(KeepImages::new(u64::from(KeepImages::MAX) + 1).is_none());
        assert_eq!(KeepImages::new(1).map(KeepImages::get), Some(1));
    }

    #[test]
    fn after_document_drops_the_oldest_images_only() {
        let image = |n: u32| json!({"type": "image", "url": format!("https://x.test/{n}.png")});
        let file = json!({"type": "file", "url": "https://x.test/a.pdf", "mediaType": "application/pdf"});
        let named = vec![image(0), file.clone(), image(1), image(2)];
        let keep = KeepImages::new(1);
        assert_eq!(after_document(&named, keep).as_ref(), [file, image(2)]);
        assert_eq!(after_document(&named, None).len(), 4);
    }
}
