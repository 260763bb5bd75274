//! The TXD reader on hand-assembled dictionaries.
