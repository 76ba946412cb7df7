//! What reading one document may cost: the limits a server sets, and the budget a reader
//! counts against them as it builds values (shared by the JSON reader in [`super::parse`] and
//! the YAML reader in [`super::yaml_stream`]).

use super::error::TurnError;
use serde::de;
use std::cell::Cell;

/// Bounds on what reading one document may cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Size of what the document holds, in bytes: its value as compact JSON (as an event's size
    /// is measured), whatever its layout. A document written as YAML or as indented JSON counts
    /// the same, so what export writes of a thread read within this limit is read back.
    pub max_input_bytes: usize,
    /// Size of YAML input text, in bytes, refused before it is parsed. YAML is read one parser
    /// event at a time, holding about what JSON text of the same value does, so by default this
    /// is as much as one protocol message may carry (64 MiB); a server may set it lower.
    pub max_yaml_input_bytes: usize,
    /// Nesting of mappings and sequences (the document root is level 1).
    pub max_depth: usize,
    /// Values built, counting every key, scalar, mapping and sequence, with YAML aliases
    /// counted once per use.
    pub max_values: usize,
    /// Bytes of all keys and strings built, with YAML aliases counted once per use.
    pub max_string_bytes: usize,
    /// Values built, and bytes of strings built, per byte of input (plus 1,024 each). Text
    /// alone never builds more than about one of either per byte; only YAML aliases can.
    pub max_expansion: usize,
}

impl Default for Limits {
    /// 16 MiB held (64 MiB of YAML text), 100 levels, 4 million values, 32 MiB of strings, 4×
    /// expansion.
    fn default() -> Self {
        Limits {
            max_input_bytes: 16 << 20,
            max_yaml_input_bytes: 64 << 20,
            max_depth: 100,
            max_values: 4_000_000,
            max_string_bytes: 32 << 20,
            max_expansion: 4,
        }
    }
}

/// What a reader has counted against its [`Limits`], and the limit that stopped it.
pub(super) struct Budget {
    max_depth: usize,
    /// The effective caps: the absolute limit, or the expansion limit when lower.
    max_values: Cap,
    max_string_bytes: Cap,
    values: Cell<usize>,
    string_bytes: Cell<usize>,
    /// The limit that stopped parsing: name, maximum, value found.
    hit: Cell<Option<(&'static str, usize, usize)>>,
}

#[derive(Clone, Copy)]
struct Cap {
    limit: &'static str,
    max: usize,
}

impl Budget {
    pub(super) fn new(limits: &Limits, input_len: usize) -> Self {
        let expansion = limits.max_expansion.saturating_mul(input_len).saturating_add(1024);
        let cap = |limit, max: usize| {
            if expansion < max {
                Cap { limit: "max_expansion", max: expansion }
            } else {
                Cap { limit, max }
            }
        };
        Budget {
            max_depth: limits.max_depth,
            max_values: cap("max_values", limits.max_values),
            max_string_bytes: cap("max_string_bytes", limits.max_string_bytes),
            values: Cell::new(0),
            string_bytes: Cell::new(0),
            hit: Cell::new(None),
        }
    }

    pub(super) fn exceeded<E: de::Error>(&self, limit: &'static str, max: usize, value: usize) -> E {
        self.hit.set(Some((limit, max, value)));
        E::custom(TurnError::Limit { limit, max, value })
    }

    /// The limit that stopped reading, if one did: name, maximum, value found.
    pub(super) fn hit(&self) -> Option<(&'static str, usize, usize)> {
        self.hit.get()
    }

    /// How deep collections may nest.
    pub(super) fn max_depth(&self) -> usize {
        self.max_depth
    }

    /// Values built so far.
    pub(super) fn values(&self) -> usize {
        self.values.get()
    }

    /// Bytes of keys and strings built so far.
    pub(super) fn string_bytes(&self) -> usize {
        self.string_bytes.get()
    }

    /// Whether `values` more values and `string_bytes` more bytes of strings stay within the
    /// caps.
    pub(super) fn fits(&self, values: usize, string_bytes: usize) -> bool {
        self.values.get().saturating_add(values) <= self.max_values.max
            && self.string_bytes.get().saturating_add(string_bytes) <= self.max_string_bytes.max
    }

    /// Counts what fits at once (a YAML alias's value, when [`Budget::fits`] says so).
    pub(super) fn add(&self, values: usize, string_bytes: usize) {
        self.values.set(self.values.get() + values);
        self.string_bytes.set(self.string_bytes.get() + string_bytes);
    }

    /// Counts a string's bytes without copying it.
    pub(super) fn count_string_len<E: de::Error>(&self, len: usize) -> Result<(), E> {
        let n = self.string_bytes.get() + len;
        self.string_bytes.set(n);
        if n > self.max_string_bytes.max {
            return Err(self.exceeded(self.max_string_bytes.limit, self.max_string_bytes.max, n));
        }
        Ok(())
    }

    /// Refuses nesting deeper than the limit (`depth` counts the root collection as 1).
    pub(super) fn check_depth<E: de::Error>(&self, depth: usize) -> Result<(), E> {
        if depth > self.max_depth {
            return Err(self.exceeded("max_depth", self.max_depth, depth));
        }
        Ok(())
    }

    pub(super) fn count_value<E: de::Error>(&self) -> Result<(), E> {
        let n = self.values.get() + 1;
        self.values.set(n);
        if n > self.max_values.max {
            return Err(self.exceeded(self.max_values.limit, self.max_values.max, n));
        }
        Ok(())
    }

    pub(super) fn count_string<E: de::Error>(&self, s: &str) -> Result<String, E> {
        let n = self.string_bytes.get() + s.len();
        self.string_bytes.set(n);
        if n > self.max_string_bytes.max {
            return Err(self.exceeded(self.max_string_bytes.limit, self.max_string_bytes.max, n));
        }
        Ok(s.to_owned())
    }
}
