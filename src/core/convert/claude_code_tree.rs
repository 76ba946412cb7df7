//! Which lines of a Claude Code session make each conversation: the thread Claude Code resumes,
//! and the branches and sidechains beside it.
//!
//! Lines form a tree by `uuid` / `parentUuid`. A conversation is the chain from a root to a
//! leaf, with each assistant turn rebuilt as Claude Code rebuilds it when it resumes: recent
//! versions write a turn's parallel `tool_use` blocks as lines of their own sharing one
//! `message.id`, each result as its own `user` line, and `progress` lines between them, so the
//! tree branches at every parallel call and a chain alone holds only one of the calls or
//! results. The other lines of the chain's turns, and the lines answering its calls (by
//! `tool_use_id`), join it wherever they hang, with the lines between them and the chain; lines
//! that hang off the conversation and say nothing (progress, system lines, with nothing said
//! below them) are part of it too. What is left, a leaf whose chain holds something said that
//! no conversation before it holds, is a real fork: a branch the user rewound away from, or a
//! subagent's sidechain.

use super::host_session::NumberedLine;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

/// Whether a line belongs to a subagent's conversation.
pub(super) fn is_sidechain(line: &Map<String, Value>) -> bool {
    line.get("isSidechain") == Some(&Value::Bool(true))
}

/// The lines' tree: each line with a `uuid`, the position of its parent, and what it says.
pub(super) struct Tree {
    pub(super) ids: Vec<Option<String>>,
    parents: Vec<Option<usize>>,
    children: Vec<Vec<usize>>,
    /// Lines with an id that no line names as its parent, in file order.
    leaves: Vec<usize>,
    sidechain: Vec<bool>,
    /// Whether the line says something (a `user` or `assistant` message, a compaction summary),
    /// and whether it or a line below it does.
    says: Vec<bool>,
    says_below: Vec<bool>,
    /// The positions of the `assistant` lines of each message id, and of the lines answering
    /// each call; with what each line holds of either.
    turns: HashMap<String, Vec<usize>>,
    answers: HashMap<String, Vec<usize>>,
    message_ids: Vec<Option<String>>,
    calls: Vec<Vec<String>>,
}

/// A conversation of the file: the line it ends at, and the positions of its lines.
pub(super) struct Conversation {
    pub(super) leaf: usize,
    pub(super) lines: HashSet<usize>,
    pub(super) sidechain: bool,
}

impl Tree {
    pub(super) fn of(lines: &[NumberedLine]) -> Self {
        let text = |line: &Map<String, Value>, key: &str| line.get(key).and_then(Value::as_str).map(str::to_owned);
        let ids: Vec<Option<String>> = lines.iter().map(|(_, line)| text(line, "uuid")).collect();
        let positions: HashMap<&str, usize> =
            ids.iter().enumerate().filter_map(|(i, id)| Some((id.as_deref()?, i))).collect();
        let mut previous_with_id: Option<usize> = None;
        let mut previous_main: Option<usize> = None;
        let mut parents = Vec::with_capacity(lines.len());
        for (position, (_, line)) in lines.iter().enumerate() {
            let parent = match line.get("parentUuid") {
                // Lines without an id (titles, snapshots, queue operations) are in no tree.
                _ if ids[position].is_none() => None,
                // Versions without the field wrote one conversation, line after line.
                None => previous_with_id,
                Some(Value::String(parent)) => positions.get(parent.as_str()).copied(),
                // A new root: a compaction names the line it follows; one that does not (older
                // versions' compactions) continues the conversation before it. A subagent's
                // conversation starts on its own.
                Some(_) => match text(line, "logicalParentUuid") {
                    Some(logical) => positions.get(logical.as_str()).copied(),
                    None if is_sidechain(line) => None,
                    None => previous_main,
                },
            };
            parents.push(parent.filter(|&p| p != position));
            if ids[position].is_some() {
                previous_with_id = Some(position);
                if !is_sidechain(line) {
                    previous_main = Some(position);
                }
            }
        }
        let mut children = vec![Vec::new(); lines.len()];
        for (position, parent) in parents.iter().enumerate() {
            if let Some(parent) = parent {
                children[*parent].push(position);
            }
        }
        let leaves = (0..lines.len()).filter(|&p| ids[p].is_some() && children[p].is_empty()).collect();
        let sidechain = lines.iter().map(|(_, line)| is_sidechain(line)).collect();
        let says: Vec<bool> = lines.iter().map(|(_, line)| says_something(line)).collect();
        let mut tree = Tree {
            ids,
            parents,
            children,
            leaves,
            sidechain,
            says_below: says.clone(),
            says,
            turns: HashMap::new(),
            answers: HashMap::new(),
            message_ids: Vec::with_capacity(lines.len()),
            calls: Vec::with_capacity(lines.len()),
        };
        for (position, (_, line)) in lines.iter().enumerate() {
            let (message_id, calls, answered) = turn_parts(line);
            if let Some(id) = &message_id {
                tree.turns.entry(id.clone()).or_default().push(position);
            }
            for id in answered {
                tree.answers.entry(id).or_default().push(position);
            }
            tree.message_ids.push(message_id);
            tree.calls.push(calls);
        }
        tree.mark_what_is_said_below();
        tree
    }

    /// Sets `says_below` of each line from the lines under it (children after their parents,
    /// as the host writes them; a parent written later still counts, by walking up).
    fn mark_what_is_said_below(&mut self) {
        for position in (0..self.says.len()).rev() {
            if !self.says_below[position] {
                continue;
            }
            let mut seen = HashSet::new();
            let mut at = self.parents[position];
            while let Some(parent) = at {
                if self.says_below[parent] || !seen.insert(parent) {
                    break;
                }
                self.says_below[parent] = true;
                at = self.parents[parent];
            }
        }
    }

    /// The thread (the conversation ending at the newest leaf that is not a subagent's), then
    /// every other conversation, ordered by the line it ends at.
    pub(super) fn conversations(&self) -> (Option<Conversation>, Vec<Conversation>) {
        let main =
            self.leaves.iter().rev().copied().find(|&leaf| !self.sidechain[leaf]).map(|leaf| self.conversation(leaf));
        let mut held: HashSet<usize> = main.iter().flat_map(|c| c.lines.iter().copied()).collect();
        let mut others = Vec::new();
        // Newest first: a fork's own parallel results are leaves of it, not forks of their own.
        for &leaf in self.leaves.iter().rev() {
            if !self.says_more(leaf, &held) {
                continue;
            }
            let conversation = self.conversation(leaf);
            held.extend(conversation.lines.iter().copied());
            others.push(conversation);
        }
        others.sort_by_key(|c| c.leaf);
        (main, others)
    }

    /// Whether the chain ending at `leaf` says something that no line in `held` says, or is
    /// held nowhere at all.
    fn says_more(&self, leaf: usize, held: &HashSet<usize>) -> bool {
        let mut at = Some(leaf);
        let mut seen = HashSet::new();
        while let Some(position) = at {
            if held.contains(&position) {
                return false;
            }
            if self.says[position] || !seen.insert(position) {
                return true;
            }
            at = self.parents[position];
        }
        true
    }

    /// The conversation ending at `leaf`: its chain, each turn rebuilt, and what hangs off it
    /// saying nothing.
    fn conversation(&self, leaf: usize) -> Conversation {
        let sidechain = self.sidechain[leaf];
        let mut lines = HashSet::new();
        let mut to_visit = Vec::new();
        self.join(leaf, &mut lines, &mut to_visit);
        while let Some(position) = to_visit.pop() {
            let same_turn = self.message_ids[position].as_ref().and_then(|id| self.turns.get(id));
            let answering = self.calls[position].iter().filter_map(|id| self.answers.get(id)).flatten();
            let joining: Vec<usize> = same_turn
                .into_iter()
                .flatten()
                .chain(answering)
                .copied()
                .filter(|&p| self.sidechain[p] == sidechain)
                .collect();
            for position in joining {
                self.join(position, &mut lines, &mut to_visit);
            }
        }
        self.add_silent_subtrees(&mut lines);
        Conversation { leaf, lines, sidechain }
    }

    /// Adds `position` and the lines above it up to one already in `lines`, noting each added.
    fn join(&self, position: usize, lines: &mut HashSet<usize>, added: &mut Vec<usize>) {
        let mut at = Some(position);
        while let Some(position) = at {
            if !lines.insert(position) {
                break;
            }
            added.push(position);
            at = self.parents[position];
        }
    }

    /// Adds the lines that hang off `lines` with nothing said in or below them.
    fn add_silent_subtrees(&self, lines: &mut HashSet<usize>) {
        let mut to_visit: Vec<usize> = lines.iter().copied().collect();
        while let Some(position) = to_visit.pop() {
            for &child in &self.children[position] {
                if !self.says_below[child] && lines.insert(child) {
                    to_visit.push(child);
                }
            }
        }
    }
}

/// Whether the line is something said: a `user` or `assistant` message, or a compaction
/// summary written as a line of its own.
fn says_something(line: &Map<String, Value>) -> bool {
    match line.get("type").and_then(Value::as_str) {
        Some("user" | "assistant") => true,
        Some("summary") => line.contains_key("message"),
        _ => false,
    }
}

/// What a line holds of a turn: an `assistant` line's message id and the ids of its calls, and
/// the ids of the calls a `user` line's results answer. (A malformed line holds nothing here;
/// reading it names what is wrong.)
fn turn_parts(line: &Map<String, Value>) -> (Option<String>, Vec<String>, Vec<String>) {
    let message = line.get("message");
    let blocks = message.and_then(|m| m.get("content")).and_then(Value::as_array);
    let ids_of = |block_type: &str, key: &str| -> Vec<String> {
        blocks
            .into_iter()
            .flatten()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some(block_type))
            .filter_map(|block| block.get(key).and_then(Value::as_str).map(str::to_owned))
            .collect()
    };
    match line.get("type").and_then(Value::as_str) {
        Some("assistant") => {
            let id = message.and_then(|m| m.get("id")).and_then(Value::as_str).map(str::to_owned);
            (id, ids_of("tool_use", "id"), Vec::new())
        }
        Some("user") => (None, Vec::new(), ids_of("tool_result", "tool_use_id")),
        _ => (None, Vec::new(), Vec::new()),
    }
}
