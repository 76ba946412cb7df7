//! OpenAI's BPE token counts, from GitHub's `bpe-openai`: its vocabularies are compiled into
//! the binary (no download at run time), and it counts without building the token list.
//! BENCHMARKS.md ("Token counting and compaction") has the measurements behind the choice.

pub fn o200k_count(text: &str) -> u64 {
    bpe_openai::o200k_base().count(text) as u64
}

pub fn cl100k_count(text: &str) -> u64 {
    bpe_openai::cl100k_base().count(text) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_known_strings() {
        // Reference counts from OpenAI's tiktoken.
        assert_eq!(cl100k_count("hello world"), 2);
        assert_eq!(o200k_count("hello world"), 2);
        assert_eq!(cl100k_count(""), 0);
    }
}
