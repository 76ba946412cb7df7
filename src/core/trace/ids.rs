//! Trace and span ids derived from a thread id and an event position.
//!
//! The same thread and position give the same id in every process and build (a fixed FNV-1a
//! over the bytes, then a SplitMix64 finish to spread them), so a live export, a restarted
//! server and a backfill agree; different threads or positions give unrelated ids.

/// What the id names: the same event can start a run, a turn and a tool call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Trace,
    Run,
    Turn,
    Tool,
}

impl Role {
    fn tag(self) -> u8 {
        match self {
            Role::Trace => b't',
            Role::Run => b'r',
            Role::Turn => b'c',
            Role::Tool => b'x',
        }
    }
}

fn hash(thread_id: &str, position: u64, tag: u8, salt: u8) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let bytes = thread_id.bytes().chain(position.to_le_bytes()).chain([tag, salt]);
    for b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    // SplitMix64's finish.
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// The trace id of the run starting at event `position`; never 0 (invalid in OpenTelemetry).
pub fn trace_id(thread_id: &str, position: u64) -> u128 {
    let high = hash(thread_id, position, Role::Trace.tag(), 0);
    let low = hash(thread_id, position, Role::Trace.tag(), 1);
    (u128::from(high) << 64 | u128::from(low)).max(1)
}

/// The id of the span of `role` starting at event `position`; never 0.
pub fn span_id(thread_id: &str, position: u64, role: Role) -> u64 {
    hash(thread_id, position, role.tag(), 0).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_distinct() {
        let ids = [
            span_id("t1", 0, Role::Run),
            span_id("t1", 0, Role::Turn),
            span_id("t1", 0, Role::Tool),
            span_id("t1", 1, Role::Run),
            span_id("t2", 0, Role::Run),
        ];
        for (i, a) in ids.iter().enumerate() {
            for b in &ids[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_ne!(trace_id("t1", 0), trace_id("t1", 1));
        assert_ne!(trace_id("t1", 0) >> 64, trace_id("t1", 0) & u128::from(u64::MAX));
    }

    #[test]
    fn ids_do_not_change_across_builds() {
        // Pinned: a change here would rename every span already exported.
        assert_eq!(span_id("run-42", 7, Role::Tool), 8709204199166981080);
        assert_eq!(format!("{:032x}", trace_id("run-42", 0)), "ac8fa879b81657a8e196165f30cc92e3");
    }
}
