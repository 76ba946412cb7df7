//! XML escaping for thread documents.
//!
//! `full` is the seed's `escapeXml`: `& < > " '`. `minimal` escapes only `& < >` and is used
//! for bodies when the host asks for it (bare quotes in JSON bodies save tokens). Both replace
//! characters XML 1.0 forbids with U+FFFD, so every document parses.

use serde::{Deserialize, Serialize};

/// How much to escape in element bodies. Attribute values are always escaped fully.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EscapeMode {
    /// `& < > " '` (the seed's rule).
    #[default]
    Full,
    /// `& < >` only.
    Minimal,
}

const REPLACEMENT: &str = "\u{FFFD}";

/// The seed's `escapeXml`, plus U+FFFD for characters XML 1.0 forbids.
pub fn escape_xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    escape_into(&mut out, text, EscapeMode::Full);
    out
}

/// Appends `text` to `out`, escaped per `mode`.
pub fn escape_into(out: &mut String, text: &str, mode: EscapeMode) {
    match mode {
        EscapeMode::Full => escape_blocks::<true>(out, text),
        EscapeMode::Minimal => escape_blocks::<false>(out, text),
    }
}

// Escaping is most of the work of rendering a thread, so it is written for speed. Input is
// scanned 32 bytes at a time where the CPU has AVX2, else 16 (SSE2, which every x86-64 CPU has;
// 8 bytes at a time with word operations on other architectures) for the bytes that need more
// than a copy. The clean span before each such byte is copied with one vector move, and the
// byte itself goes through a table that gives its output (itself, an entity or U+FFFD) without
// a branch: in code and JSON a special character every few bytes would make a branch
// mispredict often.

/// Most output bytes one input byte can produce (`"` → `&quot;`).
const MAX_EXPANSION: usize = 6;
/// Room needed past the worst-case output: a write stores up to 32 bytes and keeps only some of
/// them, and the last bytes of a block are escaped from a copy with up to 96 bytes of padding
/// (see `escape_padded` and `Sink`).
const SLACK: usize = 160;
/// Input is escaped in blocks so that the worst-case reservation stays small for huge bodies.
const BLOCK: usize = 4096;

/// What one input byte becomes: the first `len` bytes of `bytes`.
#[derive(Clone, Copy)]
struct Output {
    bytes: [u8; 8],
    len: usize,
}

const fn output(text: &str) -> Output {
    let mut bytes = [0u8; 8];
    let mut i = 0;
    while i < text.len() {
        bytes[i] = text.as_bytes()[i];
        i += 1;
    }
    Output { bytes, len: text.len() }
}

const fn outputs(quotes: bool) -> [Output; 256] {
    let mut table = [Output { bytes: [0; 8], len: 1 }; 256];
    let mut b = 0;
    while b < 256 {
        table[b].bytes[0] = b as u8;
        if b < 0x20 && !matches!(b as u8, b'\t' | b'\n' | b'\r') {
            table[b] = output(REPLACEMENT);
        }
        b += 1;
    }
    table[b'&' as usize] = output("&amp;");
    table[b'<' as usize] = output("&lt;");
    table[b'>' as usize] = output("&gt;");
    if quotes {
        table[b'"' as usize] = output("&quot;");
        table[b'\'' as usize] = output("&apos;");
    }
    table
}

static FULL_OUTPUTS: [Output; 256] = outputs(true);
static MINIMAL_OUTPUTS: [Output; 256] = outputs(false);

fn outputs_for<const QUOTES: bool>() -> &'static [Output; 256] {
    if QUOTES {
        &FULL_OUTPUTS
    } else {
        &MINIMAL_OUTPUTS
    }
}

fn escape_blocks<const QUOTES: bool>(out: &mut String, text: &str) {
    let mut start = 0;
    while start < text.len() {
        // Blocks end on character boundaries, so U+FFFE and U+FFFF are never split.
        let mut end = (start + BLOCK).min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        escape_block::<QUOTES>(out, &text.as_bytes()[start..end]);
        start = end;
    }
}

/// Appends the escaped form of `input`, a run of whole UTF-8 characters.
fn escape_block<const QUOTES: bool>(out: &mut String, input: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    append_escaped(out, input.len(), |sink| {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2.
            escape_padded::<{ avx2::LOOKAHEAD }>(input, sink, |input, sink| unsafe {
                avx2::escape_prefix::<QUOTES>(input, sink)
            })
        } else {
            escape_padded::<{ sse2::LOOKAHEAD }>(input, sink, sse2::escape_prefix::<QUOTES>)
        }
    });
    #[cfg(not(target_arch = "x86_64"))]
    append_escaped(out, input.len(), |sink| portable::escape::<QUOTES>(input, sink));
}

/// Escapes `input` with a scan that reads `LOOKAHEAD` bytes ahead of where it stands and stops
/// when fewer are left: the last bytes are escaped from a copy padded with clean bytes, and the
/// padding's output is dropped afterwards.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn escape_padded<const LOOKAHEAD: usize>(
    input: &[u8],
    sink: &mut Sink,
    escape_prefix: impl Fn(&[u8], &mut Sink) -> usize,
) {
    let done = escape_prefix(input, sink);
    let rest = &input[done.min(input.len())..];
    if !rest.is_empty() {
        // Twice the lookahead: the scan then stops past `rest` (it may stand 2 bytes past a
        // chunk's end after a U+FFFE, but `rest` is shorter than the lookahead).
        let mut padded = [b'x'; 2 * avx2::LOOKAHEAD];
        let padded = &mut padded[..2 * LOOKAHEAD];
        padded[..rest.len()].copy_from_slice(rest);
        let padded_done = escape_prefix(padded, sink);
        // Everything escaped past `rest` was padding, copied byte for byte.
        sink.len -= padded_done - rest.len();
    }
}

/// Reserves room for escaping `input_len` bytes of whole UTF-8 characters and lets `escape`
/// write them through a [`Sink`].
fn append_escaped(out: &mut String, input_len: usize, escape: impl FnOnce(&mut Sink)) {
    // SAFETY: `escape` appends its input with ASCII specials replaced by ASCII entities, C0
    // controls by U+FFFD, and the 3-byte encodings of U+FFFE/U+FFFF by that of U+FFFD; all
    // other bytes are copied in order. The input is whole characters of a `str`, so the result
    // stays valid UTF-8.
    let buf = unsafe { out.as_mut_vec() };
    buf.reserve(input_len * MAX_EXPANSION + SLACK);
    let mut sink = Sink { dst: buf.as_mut_ptr(), len: buf.len() };
    escape(&mut sink);
    // SAFETY: the bytes up to `sink.len` were written by the sink within the capacity reserved
    // above (see `Sink`), and are valid UTF-8 (see above).
    unsafe { buf.set_len(sink.len) };
}

/// The reserved spare capacity of the output buffer, written through a raw pointer.
///
/// Bounds: every write starts at `len` and stores at most 32 bytes (the chunk width); `len`
/// grows by at most `MAX_EXPANSION` per input byte consumed (1 per padding byte), and a write
/// starts only before the end of the last chunk the scan reads, at most 3 chunks into the
/// padding. So every write ends before the start length + `MAX_EXPANSION` × the block's
/// length + 4 chunks, within the `SLACK` that `append_escaped` reserved.
struct Sink {
    dst: *mut u8,
    len: usize,
}

impl Sink {
    /// Stores `bytes` at the end and keeps the first `keep` of them.
    #[inline(always)]
    fn put<const N: usize>(&mut self, bytes: [u8; N], keep: usize) {
        debug_assert!(keep <= N);
        // SAFETY: in bounds of the reserved capacity (see above); unaligned writes of bytes.
        unsafe { self.dst.add(self.len).cast::<[u8; N]>().write_unaligned(bytes) };
        self.len += keep;
    }

    /// Writes the output of the byte at `input[at]` that needs attention, and returns the
    /// position after the input it replaced.
    #[inline(always)]
    fn special(&mut self, input: &[u8], at: usize, table: &[Output; 256]) -> usize {
        let b = input[at];
        if b == 0xEF && input.get(at + 1) == Some(&0xBF) && matches!(input.get(at + 2), Some(0xBE | 0xBF)) {
            self.put(output(REPLACEMENT).bytes, 3);
            at + 3
        } else {
            let out = table[b as usize];
            self.put(out.bytes, out.len);
            at + 1
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use super::{outputs_for, Sink};
    use std::arch::x86_64::{
        __m128i, _mm_andnot_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8, _mm_storeu_si128,
    };

    /// Bit `i` set when byte `i` of `v` needs more than a copy: a special character, a C0
    /// control other than tab, newline and carriage return, or 0xEF (U+FFFE/U+FFFF start with it).
    #[inline(always)]
    #[allow(unused_unsafe)]
    fn attention<const QUOTES: bool>(v: __m128i) -> u32 {
        // SAFETY: SSE2 is part of x86-64; these only compute on registers.
        unsafe {
            let splat = |b: u8| _mm_set1_epi8(b as i8);
            let is = |x: __m128i, b: u8| _mm_cmpeq_epi8(x, splat(b));
            // `<` and `>` are the two bytes b with b | 2 == `>`; `&` and `'` those with b | 1 == `'`.
            let angles = is(_mm_or_si128(v, splat(2)), b'>');
            let mut hits = _mm_or_si128(angles, is(v, 0xEF));
            if QUOTES {
                let amp_apos = is(_mm_or_si128(v, splat(1)), b'\'');
                hits = _mm_or_si128(hits, _mm_or_si128(amp_apos, is(v, b'"')));
            } else {
                hits = _mm_or_si128(hits, is(v, b'&'));
            }
            let control = _mm_cmpeq_epi8(_mm_min_epu8(v, splat(0x1F)), v);
            let allowed = _mm_or_si128(_mm_or_si128(is(v, b'\t'), is(v, b'\n')), is(v, b'\r'));
            hits = _mm_or_si128(hits, _mm_andnot_si128(allowed, control));
            _mm_movemask_epi8(hits) as u32
        }
    }

    /// 16 bytes of `input` from `at`; the caller checks that they exist.
    #[inline(always)]
    fn load(input: &[u8], at: usize) -> __m128i {
        debug_assert!(at + 16 <= input.len());
        // SAFETY: `at + 16 <= input.len()` (every caller shows it); unaligned loads are allowed.
        unsafe { _mm_loadu_si128(input.as_ptr().add(at).cast()) }
    }

    #[inline(always)]
    fn bytes(v: __m128i) -> [u8; 16] {
        let mut out = [0u8; 16];
        // SAFETY: `out` has 16 bytes; unaligned stores are allowed.
        unsafe { _mm_storeu_si128(out.as_mut_ptr().cast(), v) };
        out
    }

    /// How far ahead of its position the scan reads: a chunk, and a span copy from its end.
    pub(super) const LOOKAHEAD: usize = 32;

    /// Escapes `input` from its start for as long as `LOOKAHEAD` bytes are left, and returns how
    /// far it got: a position after `input.len() - LOOKAHEAD` and on a character boundary.
    #[inline(always)]
    pub(super) fn escape_prefix<const QUOTES: bool>(input: &[u8], sink: &mut Sink) -> usize {
        let table = outputs_for::<QUOTES>();
        let mut i = 0;
        while i + LOOKAHEAD <= input.len() {
            let chunk = load(input, i);
            let mut hits = attention::<QUOTES>(chunk);
            let chunk_end = i + 16;
            if hits == 0 {
                sink.put(bytes(chunk), 16);
                i = chunk_end;
                continue;
            }
            // `from` is where the unwritten input starts: each span up to a hit is copied with
            // one 16-byte load from `from`, which is at most `chunk_end`, so within `input`.
            let mut from = i;
            while hits != 0 {
                let at = i + hits.trailing_zeros() as usize;
                hits &= hits - 1;
                sink.put(bytes(load(input, from)), at - from);
                // A U+FFFE/U+FFFF replacement skips 2 continuation bytes, which are never hits.
                from = sink.special(input, at, table);
            }
            if from < chunk_end {
                sink.put(bytes(load(input, from)), chunk_end - from);
                i = chunk_end;
            } else {
                i = from;
            }
        }
        i
    }
}

/// The same scan as `sse2`, 32 bytes at a time, for CPUs with AVX2 (checked at run time).
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{outputs_for, Sink};
    use std::arch::x86_64::{
        __m256i, _mm256_andnot_si256, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_min_epu8, _mm256_movemask_epi8,
        _mm256_or_si256, _mm256_set1_epi8, _mm256_storeu_si256,
    };

    /// How far ahead of its position the scan reads: a chunk, and a span copy from its end.
    pub(super) const LOOKAHEAD: usize = 64;

    /// As `sse2::attention`, for 32 bytes.
    ///
    /// Safety: the CPU must have AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    #[allow(unused_unsafe)]
    unsafe fn attention<const QUOTES: bool>(v: __m256i) -> u32 {
        // SAFETY: AVX2 is enabled here; these only compute on registers.
        unsafe {
            let splat = |b: u8| _mm256_set1_epi8(b as i8);
            let is = |x: __m256i, b: u8| _mm256_cmpeq_epi8(x, splat(b));
            let angles = is(_mm256_or_si256(v, splat(2)), b'>');
            let mut hits = _mm256_or_si256(angles, is(v, 0xEF));
            if QUOTES {
                let amp_apos = is(_mm256_or_si256(v, splat(1)), b'\'');
                hits = _mm256_or_si256(hits, _mm256_or_si256(amp_apos, is(v, b'"')));
            } else {
                hits = _mm256_or_si256(hits, is(v, b'&'));
            }
            let control = _mm256_cmpeq_epi8(_mm256_min_epu8(v, splat(0x1F)), v);
            let allowed = _mm256_or_si256(_mm256_or_si256(is(v, b'\t'), is(v, b'\n')), is(v, b'\r'));
            hits = _mm256_or_si256(hits, _mm256_andnot_si256(allowed, control));
            _mm256_movemask_epi8(hits) as u32
        }
    }

    /// 32 bytes of `input` from `at`, as bytes; the caller checks that they exist.
    #[inline]
    #[target_feature(enable = "avx2")]
    #[allow(unused_unsafe)]
    unsafe fn load(input: &[u8], at: usize) -> __m256i {
        debug_assert!(at + 32 <= input.len());
        // SAFETY: `at + 32 <= input.len()` (every caller shows it); unaligned loads are allowed.
        unsafe { _mm256_loadu_si256(input.as_ptr().add(at).cast()) }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    #[allow(unused_unsafe)]
    unsafe fn bytes(v: __m256i) -> [u8; 32] {
        let mut out = [0u8; 32];
        // SAFETY: `out` has 32 bytes; unaligned stores are allowed.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), v) };
        out
    }

    /// As `sse2::escape_prefix`, 32 bytes at a time.
    ///
    /// Safety: the CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    #[allow(unused_unsafe)]
    pub(super) unsafe fn escape_prefix<const QUOTES: bool>(input: &[u8], sink: &mut Sink) -> usize {
        let table = outputs_for::<QUOTES>();
        let mut i = 0;
        // SAFETY (all blocks below): AVX2 is enabled here; loads are within `input` as noted.
        while i + LOOKAHEAD <= input.len() {
            let chunk = unsafe { load(input, i) };
            let mut hits = unsafe { attention::<QUOTES>(chunk) };
            let chunk_end = i + 32;
            if hits == 0 {
                sink.put(unsafe { bytes(chunk) }, 32);
                i = chunk_end;
                continue;
            }
            // `from` is at most `chunk_end`, so a 32-byte load from it stays within `input`.
            let mut from = i;
            while hits != 0 {
                let at = i + hits.trailing_zeros() as usize;
                hits &= hits - 1;
                sink.put(unsafe { bytes(load(input, from)) }, at - from);
                from = sink.special(input, at, table);
            }
            if from < chunk_end {
                sink.put(unsafe { bytes(load(input, from)) }, chunk_end - from);
                i = chunk_end;
            } else {
                i = from;
            }
        }
        i
    }
}

/// The same escaping 8 bytes at a time with word operations, for other architectures.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
mod portable {
    use super::{outputs_for, Sink};

    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;

    /// True if some byte of `word` is below `n` (n ≤ 0x80).
    const fn has_byte_below(word: u64, n: u8) -> bool {
        word.wrapping_sub(ONES * n as u64) & !word & HIGHS != 0
    }

    const fn has_byte(word: u64, b: u8) -> bool {
        has_byte_below(word ^ (ONES * b as u64), 1)
    }

    /// True if some byte of `word` may need more than a copy: a special character, a control
    /// character (tab, newline and carriage return included), or 0xEF.
    const fn needs_attention<const QUOTES: bool>(word: u64) -> bool {
        has_byte_below(word, 0x20)
            || has_byte(word, b'&')
            || has_byte(word, b'<')
            || has_byte(word, b'>')
            || has_byte(word, 0xEF)
            || (QUOTES && (has_byte(word, b'"') || has_byte(word, b'\'')))
    }

    pub(super) fn escape<const QUOTES: bool>(input: &[u8], sink: &mut Sink) {
        let table = outputs_for::<QUOTES>();
        let n = input.len();
        let mut i = 0;
        while i < n {
            let word_end = i + 8;
            if word_end <= n {
                let word: [u8; 8] = input[i..word_end].try_into().expect("8 bytes");
                if !needs_attention::<QUOTES>(u64::from_le_bytes(word)) {
                    sink.put(word, 8);
                    i = word_end;
                    continue;
                }
            }
            while i < word_end.min(n) {
                i = sink.special(input, i, table);
            }
        }
    }
}

/// True for characters that XML 1.0 does not allow in a document.
pub fn is_forbidden_char(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{8}' | '\u{B}' | '\u{C}' | '\u{E}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_the_five_specials() {
        assert_eq!(escape_xml(r#"a & b < c > d " e ' f"#), "a &amp; b &lt; c &gt; d &quot; e &apos; f");
        assert_eq!(escape_xml("&amp;"), "&amp;amp;");
    }

    #[test]
    fn minimal_keeps_quotes() {
        let mut out = String::new();
        escape_into(&mut out, r#"{"a":'b'} & <x>"#, EscapeMode::Minimal);
        assert_eq!(out, r#"{"a":'b'} &amp; &lt;x&gt;"#);
    }

    #[test]
    fn forbidden_characters_become_replacement() {
        let text = "a\u{0}b\u{1b}[31mc\u{B}\u{C}\u{FFFE}\u{FFFF}\t\n\r\u{FFFD}\u{FFFC}😀";
        assert_eq!(escape_xml(text), "a\u{FFFD}b\u{FFFD}[31mc\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\t\n\r\u{FFFD}\u{FFFC}😀");
        for c in ['\u{0}', '\u{8}', '\u{B}', '\u{C}', '\u{E}', '\u{1F}', '\u{FFFE}', '\u{FFFF}'] {
            assert!(is_forbidden_char(c));
        }
        for c in ['\t', '\n', '\r', ' ', '\u{FFFD}', '\u{7F}'] {
            assert!(!is_forbidden_char(c));
        }
    }

    /// Texts longer than a block, with every character class at every position around the
    /// block boundaries and word edges.
    #[test]
    fn block_and_word_boundaries_do_not_change_the_result() {
        for special in ["\u{FFFE}", "\u{FFFF}", "\u{EFFF}", "😀", "&", "\"", "\u{1}", "\r\n", "é"] {
            for at in (BLOCK - 12..BLOCK + 12).chain(0..12) {
                let text = format!("{}{special}{}", "a".repeat(at), "b'".repeat(5));
                for mode in [EscapeMode::Full, EscapeMode::Minimal] {
                    check(&text, mode, &format!("{special:?} at {at}"));
                }
            }
        }
        let long = "x<y & \"z\" \u{FFFE}\u{1b}[0m é😀 ".repeat(3 * BLOCK);
        let mut out = String::from("kept ");
        escape_into(&mut out, &long, EscapeMode::Full);
        assert_eq!(out, format!("kept {}", reference(&long, EscapeMode::Full)));
        check(&long, EscapeMode::Minimal, "long");
    }

    /// Every character class at every offset of texts up to 70 bytes and around 128, alone and in
    /// runs, so that hits fall on every position of the 16- and 32-byte scans and of the padding.
    #[test]
    fn scan_positions_do_not_change_the_result() {
        let specials =
            ["\u{FFFE}", "\u{FFFF}", "\u{EFBF}", "\u{FEFF}", "😀", "&", "<", ">", "\"", "'", "\u{0}", "\u{1F}"];
        let specials = specials.iter().copied().chain(["\t", "\n", "\r", "é", "中", "\u{7F}"]);
        for special in specials {
            for len in (0..70).chain(124..133) {
                for at in 0..=len {
                    for filler in ["a", "&"] {
                        let text = format!("{}{special}{}", filler.repeat(at), "b".repeat(len - at));
                        for mode in [EscapeMode::Full, EscapeMode::Minimal] {
                            check(&text, mode, &format!("{special:?} at {at} of {len}"));
                        }
                    }
                    let run = format!("{}{}", "c".repeat(at), special.repeat(len - at));
                    check(&run, EscapeMode::Full, &format!("run of {special:?} from {at}"));
                }
            }
        }
    }

    /// `text` escaped block by block as `escape_blocks` does, each block by `escape`.
    fn blockwise(text: &str, escape: impl Fn(&[u8], &mut Sink)) -> String {
        let mut out = String::new();
        let mut start = 0;
        while start < text.len() {
            let mut end = (start + BLOCK).min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let block = &text.as_bytes()[start..end];
            append_escaped(&mut out, block.len(), |sink| escape(block, sink));
            start = end;
        }
        out
    }

    /// Every implementation this build has: the one `escape_into` picks, and the others.
    fn every_implementation(text: &str, mode: EscapeMode) -> Vec<(&'static str, String)> {
        let mut out = String::new();
        escape_into(&mut out, text, mode);
        let full = mode == EscapeMode::Full;
        let mut results = vec![("escape_into", out)];
        results.push((
            "portable",
            blockwise(
                text,
                |b, sink| if full { portable::escape::<true>(b, sink) } else { portable::escape::<false>(b, sink) },
            ),
        ));
        #[cfg(target_arch = "x86_64")]
        {
            results.push((
                "sse2",
                blockwise(text, |b, sink| {
                    if full {
                        escape_padded::<{ sse2::LOOKAHEAD }>(b, sink, sse2::escape_prefix::<true>)
                    } else {
                        escape_padded::<{ sse2::LOOKAHEAD }>(b, sink, sse2::escape_prefix::<false>)
                    }
                }),
            ));
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2.
                results.push((
                    "avx2",
                    blockwise(text, |b, sink| {
                        escape_padded::<{ avx2::LOOKAHEAD }>(b, sink, |b, sink| unsafe {
                            if full {
                                avx2::escape_prefix::<true>(b, sink)
                            } else {
                                avx2::escape_prefix::<false>(b, sink)
                            }
                        })
                    }),
                ));
            }
        }
        results
    }

    /// Every implementation, checked against the definition.
    fn check(text: &str, mode: EscapeMode, what: &str) {
        let expected = reference(text, mode);
        for (implementation, out) in every_implementation(text, mode) {
            assert_eq!(out, expected, "{implementation}: {what} {mode:?}");
        }
    }

    fn reference(text: &str, mode: EscapeMode) -> String {
        text.chars()
            .map(|c| match c {
                '&' => "&amp;".to_owned(),
                '<' => "&lt;".to_owned(),
                '>' => "&gt;".to_owned(),
                '"' if mode == EscapeMode::Full => "&quot;".to_owned(),
                '\'' if mode == EscapeMode::Full => "&apos;".to_owned(),
                c if is_forbidden_char(c) => "\u{FFFD}".to_owned(),
                c => c.to_string(),
            })
            .collect()
    }

    /// The table-driven loop against the definition, character by character, over every
    /// character class and every 0xEF-led character near the ends of the text.
    #[test]
    fn matches_the_character_by_character_definition() {
        let mut samples: Vec<char> = (0u32..0x80).filter_map(char::from_u32).collect();
        samples.extend((0xF000u32..=0xFFFF).step_by(97).filter_map(char::from_u32));
        samples.extend(['\u{FFFD}', '\u{FFFE}', '\u{FFFF}', '\u{FEFF}', 'é', '中', '😀']);
        for mode in [EscapeMode::Full, EscapeMode::Minimal] {
            for &a in &samples {
                for b in ['x', '\u{FFFE}', '&', '\u{EFFF}'] {
                    let long = format!("{}{a}{b}{}", "z".repeat(29), "y".repeat(17));
                    for text in [format!("{a}"), format!("{a}{b}"), format!("{b}{a}z"), format!("ab{a}{a}"), long] {
                        check(&text, mode, &format!("{text:?}"));
                    }
                }
            }
        }
    }
}
