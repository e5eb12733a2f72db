//! Decoding the test kernel's defmt stream (its serial port output) with the kernel ELF.

use defmt_decoder::{DecodeError, Table};
use std::path::Path;

/// Why a log could not be decoded.
#[derive(Debug)]
pub enum LogError {
    /// The kernel ELF could not be read.
    Elf(std::io::Error),
    /// The ELF has no defmt table, or an unreadable one.
    Table(String),
}

impl std::fmt::Display for LogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LogError::Elf(e) => write!(f, "cannot read the kernel ELF: {e}"),
            LogError::Table(e) => write!(f, "no usable defmt table in the kernel ELF: {e}"),
        }
    }
}

/// A defmt table, loaded once and used for every case.
pub struct Decoder {
    table: Table,
}

impl Decoder {
    /// Load the table from the kernel ELF.
    pub fn load(elf: &Path) -> Result<Decoder, LogError> {
        let bytes = std::fs::read(elf).map_err(LogError::Elf)?;
        match Table::parse(&bytes) {
            Ok(Some(table)) => Ok(Decoder { table }),
            Ok(None) => Err(LogError::Table("the ELF has no .defmt section".into())),
            Err(e) => Err(LogError::Table(e.to_string())),
        }
    }

    /// Decode a whole serial capture into text lines. Bytes that do not form a frame (a
    /// truncated last frame after a crash) end the log with a note instead of failing.
    pub fn decode(&self, bytes: &[u8]) -> Vec<String> {
        let mut stream = self.table.new_stream_decoder();
        stream.received(bytes);
        let mut lines = Vec::new();
        loop {
            match stream.decode() {
                Ok(frame) => {
                    let level =
                        frame.level().map(|l| l.as_str().to_uppercase()).unwrap_or_default();
                    lines.push(format!("{level:<5} {}", frame.display_message()));
                }
                Err(DecodeError::UnexpectedEof) => break,
                Err(DecodeError::Malformed) => {
                    lines.push("(malformed defmt frame: log truncated here)".into());
                    break;
                }
            }
        }
        lines
    }
}
