//! Example programs.
