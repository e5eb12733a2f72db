//! Logging macros. With the `defmt` feature they forward to `defmt` (format strings follow
//! defmt's syntax, the binary carries no strings, the host decodes); without it they compile to
//! nothing, so host builds need no global logger.

/// Log at trace level.
#[macro_export]
macro_rules! trace { ($($t:tt)*) => { $crate::__log!(trace, $($t)*) } }
/// Log at debug level.
#[macro_export]
macro_rules! debug { ($($t:tt)*) => { $crate::__log!(debug, $($t)*) } }
/// Log at info level.
#[macro_export]
macro_rules! info { ($($t:tt)*) => { $crate::__log!(info, $($t)*) } }
/// Log at warn level.
#[macro_export]
macro_rules! warn { ($($t:tt)*) => { $crate::__log!(warn, $($t)*) } }
/// Log at error level.
#[macro_export]
macro_rules! error { ($($t:tt)*) => { $crate::__log!(error, $($t)*) } }

#[cfg(feature = "defmt")]
#[doc(hidden)]
#[macro_export]
macro_rules! __log {
    ($level:ident, $($t:tt)*) => { $crate::__defmt::$level!($($t)*) };
}

#[cfg(not(feature = "defmt"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __log {
    ($level:ident, $fmt:literal $(, $arg:expr)* $(,)?) => {{
        // Evaluate nothing, but keep the arguments type-checked and "used".
        if false {
            $( let _ = &$arg; )*
        }
    }};
}
