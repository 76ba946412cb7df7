//! Per-iteration token estimates for a thread read from a file, counted as `thread/tokens`
//! counts its `byIteration` shares: upstream's estimate of each iteration's `<event>` lines.

use crate::context::{estimate_from_len, utf16_len};
use crate::event::AgentEvent;
use crate::xml::{EscapeMode, XmlRenderer};
use serde_json::Number;
use std::collections::HashMap;

/// `(iteration, estimated tokens)`, ascending by iteration.
pub fn iteration_tokens(events: &[AgentEvent], escape: EscapeMode) -> Vec<(Number, u64)> {
    let mut renderer = XmlRenderer::new(escape);
    let mut shares: HashMap<u64, (f64, Number, u64)> = HashMap::new();
    for event in events {
        let before = renderer.lines().len();
        renderer.extend(std::iter::once(event));
        let length = utf16_len(&renderer.lines()[before..]);
        let number = event.iteration();
        let key = number.as_f64().unwrap_or(0.0) + 0.0;
        shares.entry(key.to_bits()).or_insert_with(|| (key, number.clone(), 0)).2 += length;
    }
    let mut shares: Vec<(f64, Number, u64)> = shares.into_values().collect();
    shares.sort_by(|a, b| a.0.total_cmp(&b.0));
    shares.into_iter().map(|(_, number, length)| (number, estimate_from_len(length))).collect()
}
