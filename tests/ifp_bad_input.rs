//! Bad input: truncation at every byte, impossible counts, bad values. Never a panic.
