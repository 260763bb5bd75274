//! [`Bounds`]: what every binary reader refuses alike.

use super::bytes::{CountTooLarge, Short};

/// What the IFP, DAN, RenderWare (DFF, TXD) and ANIE readers refuse alike, each inside its own
/// typed error with the byte offset: a file (or a block) that ends inside a value, a count that
/// promises more items than the bytes left could hold (checked before anything is allocated
/// from it), and a negative count.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Bounds {
    /// The file, or the block being read, ends inside a value.
    #[error(
        "{expected} needs {needed} bytes but only {available} remain in the {}",
        within.unwrap_or("file")
    )]
    Truncated {
        /// What was being read.
        expected: &'static str,
        /// Its size in bytes.
        needed: u64,
        /// The bytes left in the file or the block.
        available: u64,
        /// The block whose declared length ended first; `None` when the file did.
        within: Option<&'static str>,
    },
    /// A count promises more items than the bytes left could hold.
    #[error(
        "{what} count {count} cannot fit: each needs at least {min_each} bytes and only {bytes_left} remain"
    )]
    CountTooLarge {
        /// What is counted.
        what: &'static str,
        /// The count as stored.
        count: u64,
        /// The smallest encoding of one item, in bytes.
        min_each: u64,
        /// The bytes left.
        bytes_left: u64,
    },
    /// A signed count is negative.
    #[error("negative {what} count {value}")]
    NegativeCount {
        /// What is counted.
        what: &'static str,
        /// The count as stored.
        value: i32,
    },
}

impl Bounds {
    /// `expected` could not be read: the byte reader came `short`, inside `within` (a block
    /// whose declared length ended first) or, when `None`, at the end of the file.
    pub(crate) fn truncated(
        expected: &'static str,
        short: &Short,
        within: Option<&'static str>,
    ) -> Self {
        Bounds::Truncated {
            expected,
            needed: short.needed,
            available: short.available,
            within,
        }
    }

    /// The count of `what` that the byte reader found could not fit.
    pub(crate) fn count_too_large(what: &'static str, c: &CountTooLarge) -> Self {
        Bounds::CountTooLarge {
            what,
            count: c.count,
            min_each: c.min_each,
            bytes_left: c.bytes_left,
        }
    }
}
