//! Which host wrote a session file, and [`SessionReader`], which reads a whole file or, line
//! by line, what a host appended to it since, with that host's mapping.
//!
//! It sits above the formats: each format module builds on [`super::host_session`] alone.

use super::claude_code_tree::is_sidechain;
use super::from_claude_code::{self, ClaudeCodeLines, CLAUDE_CODE_LINE_EVENT_TYPE};
use super::from_codex::{CodexLines, CODEX_LINE_EVENT_TYPE};
use super::host_session::{count_lines, parse_lines, SessionError, SessionImport};
use super::session_media::SessionMedia;
use crate::event::AgentEvent;
use crate::media::{Blob, IngestLimits};

/// Which host wrote the session file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostFormat {
    /// Claude Code: `~/.claude/projects/<project>/<session>.jsonl`.
    ClaudeCode,
    /// Codex CLI: `~/.codex/sessions/…/rollout-….jsonl`.
    Codex,
}

impl HostFormat {
    /// The type of the event that keeps a line of this format it does not model, whole.
    pub fn line_event_type(self) -> &'static str {
        match self {
            HostFormat::ClaudeCode => CLAUDE_CODE_LINE_EVENT_TYPE,
            HostFormat::Codex => CODEX_LINE_EVENT_TYPE,
        }
    }
}

/// Reads a host's session file as events: all of it at once ([`SessionReader::read_all`]), then,
/// for a file the host goes on writing, the lines appended since ([`SessionReader::read_more`]),
/// continuing the iteration count.
#[derive(Debug)]
pub struct SessionReader {
    lines: Lines,
    /// Lines read so far, for the numbers in errors.
    line_count: usize,
}

#[derive(Debug)]
enum Lines {
    ClaudeCode(ClaudeCodeLines),
    Codex(CodexLines),
}

impl SessionReader {
    pub fn new(format: HostFormat) -> Self {
        SessionReader::with_limits(format, IngestLimits::DEFAULT)
    }

    /// A reader whose media parts must keep `limits` (a bigger blob fails its line).
    pub fn with_limits(format: HostFormat, limits: IngestLimits) -> Self {
        let media = SessionMedia::new(limits);
        let lines = match format {
            HostFormat::ClaudeCode => Lines::ClaudeCode(ClaudeCodeLines::with_media(media)),
            HostFormat::Codex => Lines::Codex(CodexLines::with_media(media)),
        };
        SessionReader { lines, line_count: 0 }
    }

    /// The blobs of the media parts [`SessionReader::read_more`] read since last asked (those
    /// of [`SessionReader::read_all`] come in its [`SessionImport::blobs`]), each once.
    pub fn take_blobs(&mut self) -> Vec<Blob> {
        match &mut self.lines {
            Lines::ClaudeCode(reader) => reader.media.take_blobs(),
            Lines::Codex(reader) => reader.media.take_blobs(),
        }
    }

    /// Reads a whole file. With `keep_branches`, the other branches and sidechains come back
    /// as [`Branch`](super::host_session::Branch)es; else they are only counted. Nothing is
    /// returned for a file with a bad line.
    pub fn read_all(&mut self, text: &str, keep_branches: bool) -> Result<SessionImport, SessionError> {
        let lines = parse_lines(text, self.line_count)?;
        self.line_count += count_lines(text);
        match &mut self.lines {
            Lines::ClaudeCode(reader) => from_claude_code::read_session(reader, lines, keep_branches),
            Lines::Codex(reader) => reader.read_session(lines),
        }
    }

    /// Reads complete lines the host appended (`text` ends at a line break), continuing from what
    /// was read before. Lines come in the order written: a branch begun later is not told apart,
    /// while sidechain lines are left out, as [`SessionReader::read_all`] leaves them out.
    pub fn read_more(&mut self, text: &str) -> Result<Vec<AgentEvent>, SessionError> {
        let lines = parse_lines(text, self.line_count)?;
        self.line_count += count_lines(text);
        let mut events = Vec::new();
        for (number, line) in lines {
            let more = match &mut self.lines {
                Lines::ClaudeCode(_) if is_sidechain(&line) => continue,
                Lines::ClaudeCode(reader) => reader.line(number, line)?,
                Lines::Codex(reader) => reader.line(number, line)?,
            };
            events.extend(more);
        }
        Ok(events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_later_are_numbered_after_those_before() {
        assert_eq!((count_lines(""), count_lines("a"), count_lines("a\n"), count_lines("a\n\nb")), (0, 1, 1, 3));
        let mut reader = SessionReader::new(HostFormat::Codex);
        reader.read_all("", false).unwrap();
        reader.read_more("{\"type\":\"x\"}\n\n").unwrap();
        assert_eq!(reader.read_more("nope\n").unwrap_err().line, 3);
    }
}
