//! Printing an error with its causes, without `std`.
//!
//! Every error type of the framework follows one rule: a variant that wraps another error
//! returns it from [`source`](core::error::Error::source) and does not repeat its text in its
//! own `Display`, so the message is never printed twice. [`Chain`] prints the whole story on one
//! line for a kernel log.

use core::error::Error;
use core::fmt;

/// Displays an error and each of its sources, separated by `": "`:
/// `no room in the sink for the packet: no room for 5 dwords (2 free)`.
#[derive(Clone, Copy)]
pub struct Chain<'a>(pub &'a (dyn Error + 'a));

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(e) = source {
            write!(f, ": {e}")?;
            source = e.source();
        }
        Ok(())
    }
}

impl fmt::Debug for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
