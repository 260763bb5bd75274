//! The rigplay CLI.
