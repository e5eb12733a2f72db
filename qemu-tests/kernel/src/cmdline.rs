//! The kernel command line (`-append`): `case=<name>` and flags, copied into the kernel before
//! anything is allocated. x86_64 gets it from the PVH start info, aarch64 from semihosting.

/// Longest command line kept; the rest is dropped.
pub const MAX_CMDLINE: usize = 256;

/// A copied command line.
pub struct Cmdline {
    bytes: [u8; MAX_CMDLINE],
    len: usize,
}

impl Cmdline {
    /// An empty command line.
    pub const fn new() -> Cmdline {
        Cmdline { bytes: [0; MAX_CMDLINE], len: 0 }
    }

    /// Append one byte; `false` once full (the byte is dropped).
    pub fn push(&mut self, byte: u8) -> bool {
        let Some(slot) = self.bytes.get_mut(self.len) else { return false };
        *slot = byte;
        self.len += 1;
        true
    }

    /// The whole line, empty if it is not UTF-8.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }

    /// Value of `key=value`.
    pub fn arg(&self, key: &str) -> Option<&str> {
        self.as_str()
            .split_ascii_whitespace()
            .find_map(|word| word.strip_prefix(key).and_then(|rest| rest.strip_prefix('=')))
    }

    /// Whether the bare flag `key` is present.
    pub fn flag(&self, key: &str) -> bool {
        self.as_str().split_ascii_whitespace().any(|word| word == key)
    }
}
