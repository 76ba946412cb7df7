//! A corpus for the search benchmark: the agent runs of `thread_gen.rs`, whose text draws on
//! some fifty words, given the long tail real runs have. Every text an event holds gets a
//! sentence of words drawn from a 30,000-word vocabulary by Zipf's law (a few words are
//! everywhere, most are rare), and a trace id of its own (a word found once), so a query set
//! can ask for common, middling, rare and unique words.
//!
//! And the fixed query set, with the `rg` arguments that look for the same thing in the
//! threads' JSON Lines files (one event a line, so a matching line is a matching event).

use super::thread_gen::generate_thread;
use serde_json::Value;

const VOCABULARY: usize = 30_000;
const CONSONANTS: &[u8] = b"bdfgklmnprstvzhj";
const VOWELS: &[u8] = b"aeiou";

pub struct Corpus {
    words: Vec<String>,
    /// Cumulative Zipf weights (exponent 1.07), for drawing a word by rank.
    cumulative: Vec<f64>,
}

pub struct BenchQuery {
    pub query: String,
    pub kind: &'static str,
    /// `rg` arguments (before the directory) counting the lines that match.
    pub rg_args: Vec<String>,
}

/// A term as `rg` sees it: a regex, and whether lines matching it are left out.
struct RgTerm {
    regex: String,
    excluded: bool,
}

impl Corpus {
    pub fn new() -> Corpus {
        let words: Vec<String> = (0..VOCABULARY).map(pseudo_word).collect();
        let mut total = 0.0;
        let cumulative = (0..VOCABULARY)
            .map(|rank| {
                total += 1.0 / ((rank + 1) as f64).powf(1.07);
                total
            })
            .collect();
        Corpus { words, cumulative }
    }

    /// The events of thread `t` as JSON lines.
    pub fn thread(&self, events: usize, t: u64) -> Vec<String> {
        let mut rng = t.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0x9E37_79B9;
        generate_thread(events, t)
            .into_iter()
            .enumerate()
            .map(|(e, mut event)| {
                if let Some(text) = text_field(&mut event) {
                    let count = 3 + next(&mut rng) % 28;
                    for _ in 0..count {
                        text.push(' ');
                        text.push_str(self.draw(&mut rng));
                    }
                    text.push_str(&format!(" trace {}", trace_id(t, e as u64)));
                }
                event.to_string()
            })
            .collect()
    }

    fn draw(&self, rng: &mut u64) -> &str {
        let total = *self.cumulative.last().unwrap();
        let at = (next(rng) >> 11) as f64 / (1u64 << 53) as f64 * total;
        let rank = self.cumulative.partition_point(|&c| c < at).min(VOCABULARY - 1);
        &self.words[rank]
    }

    /// The fixed query set; `unique` is a trace id the corpus holds once.
    pub fn queries(&self, unique: &str) -> Vec<BenchQuery> {
        let w = |rank: usize| self.words[rank].as_str();
        let word = |q: &str| RgTerm { regex: format!(r"\b{q}\b"), excluded: false };
        let not = |q: &str| RgTerm { regex: format!(r"\b{q}\b"), excluded: true };
        let phrase = |a: &str, b: &str| RgTerm { regex: format!(r"\b{a}\W+{b}\b"), excluded: false };
        let prefix = |p: &str| RgTerm { regex: format!(r"\b{p}"), excluded: false };
        let rare_prefix = &w(5_000)[..4];
        vec![
            query("the".into(), "word, common in prose", vec![word("the")]),
            query("timeout".into(), "word, common", vec![word("timeout")]),
            query(w(10).into(), "word, Zipf rank 10", vec![word(w(10))]),
            query(w(1_000).into(), "word, Zipf rank 1,000", vec![word(w(1_000))]),
            query(w(20_000).into(), "word, Zipf rank 20,000 (rare)", vec![word(w(20_000))]),
            query(unique.into(), "word, in one event", vec![word(unique)]),
            query("latency retry".into(), "two common words", vec![word("latency"), word("retry")]),
            query("\"mismatched types\"".into(), "phrase, common", vec![phrase("mismatched", "types")]),
            query(format!("\"{} {}\"", w(0), w(1)), "phrase, Zipf ranks 0 and 1", vec![phrase(w(0), w(1))]),
            query(format!("\"{} {}\"", w(200), w(300)), "phrase, rare", vec![phrase(w(200), w(300))]),
            query("conf*".into(), "prefix, common", vec![prefix("conf")]),
            query(format!("{rare_prefix}*"), "prefix, rarer", vec![prefix(rare_prefix)]),
            query("latency -retry".into(), "word minus a common word", vec![word("latency"), not("retry")]),
            query(
                format!("{} -{}", w(1_000), w(10)),
                "rarer word minus a common one",
                vec![word(w(1_000)), not(w(10))],
            ),
            query(
                format!("{} \"status 200\" -timeout", w(100)),
                "word, phrase and exclusion",
                vec![word(w(100)), phrase("status", "200"), not("timeout")],
            ),
        ]
    }
}

fn query(query: String, kind: &'static str, terms: Vec<RgTerm>) -> BenchQuery {
    let mut rg_args: Vec<String> = vec!["-c".into(), "-i".into()];
    if let [only] = terms.as_slice() {
        rg_args.extend(["-e".into(), only.regex.clone()]);
    } else {
        // One line (event) must hold every term and none of the excluded: lookaheads, PCRE2.
        let pattern: String =
            terms.iter().map(|t| format!("(?{}.*{})", if t.excluded { '!' } else { '=' }, t.regex)).collect();
        rg_args.extend(["-P".into(), "-e".into(), format!("^{pattern}")]);
    }
    BenchQuery { query, kind, rg_args }
}

/// Two-letter syllables, so no two ranks spell the same word.
fn pseudo_word(rank: usize) -> String {
    let syllables = CONSONANTS.len() * VOWELS.len();
    let mut n = rank + syllables; // at least two syllables
    let mut word = String::new();
    while n > 0 {
        let s = n % syllables;
        word.push(CONSONANTS[s / VOWELS.len()] as char);
        word.push(VOWELS[s % VOWELS.len()] as char);
        n /= syllables;
    }
    word
}

/// A word found in one event only.
pub fn trace_id(thread: u64, event: u64) -> String {
    let mut h = (thread << 20) | event;
    format!("tr{:010x}", next(&mut h) & 0xff_ffff_ffff)
}

fn text_field(event: &mut Value) -> Option<&mut String> {
    let name = match event["type"].as_str()? {
        "message" => "content",
        "tool_result" | "completion" => "result",
        "error" => "error",
        "summary" => "summary",
        "human_input_requested" => "question",
        "human_input_received" => "response",
        _ => return None,
    };
    match event.get_mut(name)? {
        Value::String(text) => Some(text),
        _ => None,
    }
}

/// splitmix64.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
