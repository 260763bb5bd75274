//! [`Bounds`]: what every binary reader refuses alike.

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
