//! `cargo xtask decode <family> <file>`: a captured ring or indirect buffer (binary dwords,
//! little-endian) printed as named packets and fields, from the family's packet table
//! (`baregpu_regs::packet::decode`); for `vc4`, a control list (bytes) printed as named records
//! and fields (`baregpu_regs::packet::decode_records`); for `nvidia`, a pushbuffer (dwords)
//! printed as named commands, methods and fields (`baregpu_regs::pushbuffer::decode_pushbuffer`).

use std::fmt;
use std::path::Path;
use std::process::ExitCode;

use baregpu_regs::packet::{decode, decode_records};
use baregpu_regs::pushbuffer::decode_pushbuffer;

/// Why a capture could not be decoded.
#[derive(Debug)]
pub enum DecodeError {
    /// A family without a packet table.
    UnknownFamily(String),
    /// The file could not be read.
    Read(std::io::Error),
    /// Its length is not a whole number of dwords.
    NotDwords(usize),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::UnknownFamily(name) => {
                write!(
                    f,
                    "no packet table for family {name:?} (known: r5xx, evergreen, vc4, nvidia)"
                )
            }
            DecodeError::Read(e) => write!(f, "cannot read the capture: {e}"),
            DecodeError::NotDwords(n) => write!(f, "{n} bytes is not a whole number of dwords"),
        }
    }
}

/// The little-endian dwords of a capture.
pub fn dwords(bytes: &[u8]) -> Result<Vec<u32>, DecodeError> {
    if !bytes.len().is_multiple_of(4) {
        return Err(DecodeError::NotDwords(bytes.len()));
    }
    Ok(bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// The stream `dwords` of `family`, one packet per line.
pub fn render(family: &str, dwords: &[u32]) -> Result<String, DecodeError> {
    match family {
        "r5xx" => Ok(decode(baregpu_regs::r5xx::packets::ALL, dwords).to_string()),
        "evergreen" => Ok(decode(baregpu_regs::evergreen::packets::ALL, dwords).to_string()),
        "nvidia" => {
            use baregpu_regs::nvidia::packets::{COMMANDS, METHODS};
            Ok(decode_pushbuffer(COMMANDS, METHODS, dwords).to_string())
        }
        other => Err(DecodeError::UnknownFamily(other.into())),
    }
}

fn run(family: &str, file: &Path) -> Result<String, DecodeError> {
    let bytes = std::fs::read(file).map_err(DecodeError::Read)?;
    if family == "vc4" {
        // Control lists are byte streams: any length is whole records or a cut one.
        return Ok(decode_records(baregpu_regs::vc4::packets::ALL, &bytes).to_string());
    }
    render(family, &dwords(&bytes)?)
}

/// The `decode` command.
pub fn decode_job(args: &[String]) -> ExitCode {
    let [family, file] = args else {
        eprintln!(
            "usage: cargo xtask decode <r5xx|evergreen|nvidia> <file of little-endian dwords>\n       \
             cargo xtask decode vc4 <control list bytes>"
        );
        return ExitCode::from(2);
    };
    match run(family, Path::new(file)) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("decode: {file}: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_captured_evergreen_fence_reads_as_named_fields() {
        // SURFACE_SYNC then EVENT_WRITE_EOP with 64-bit data and an interrupt (§9.6.7, §9.6.2),
        // as the driver writes a fence, little-endian in a file.
        let stream: [u32; 11] = [
            0xC003_4300,
            0x8000_0000 | 0x0300_0000,
            0xFFFF_FFFF,
            0,
            10,
            0xC004_4700,
            0x14 | 5 << 8,
            0x1000,
            2 << 29 | 2 << 24,
            7,
            0,
        ];
        let bytes: Vec<u8> = stream.iter().flat_map(|d| d.to_le_bytes()).collect();
        let path = std::env::temp_dir().join(format!("xtask-decode-{}", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        let text = run("evergreen", &path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "    0: c0034300 SURFACE_SYNC (4 dwords) ENGINE=ME COHER_CNTL=0x3000000 \
             COHER_SIZE=0xffffffff COHER_BASE=0x0 VMID=0x0 POLL_INTERVAL=0xa"
        );
        assert!(lines[1].starts_with("    5: c0044700 EVENT_WRITE_EOP (5 dwords) EVENT_INDEX=EOP"));
        assert!(lines[1].contains("DATA_SEL=DATA64 INT_SEL=ON_CONFIRM"), "{}", lines[1]);
    }

    #[test]
    fn r5xx_streams_use_the_r5xx_table() {
        // Type-0 CP_IB_BASE/CP_IB_BUFSZ (§5.10), then WAIT_MEM (§6.2.5.2).
        let op = baregpu_regs::r5xx::packets::WAIT_MEM.opcode as u32;
        let text =
            render("r5xx", &[0x0001_01CC, 0x1000, 16, 0xC001_0000 | op << 8, 0x2000, 2]).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "    0: 000101cc TYPE0 reg 0x0730 x2: 0x1000 0x10");
        assert!(
            lines[1].ends_with("WAIT_MEM (2 dwords) SEM_ADDR=0x800 SEM_LEN=0x2"),
            "{}",
            lines[1]
        );
    }

    #[test]
    fn a_vc4_control_list_reads_as_named_records() {
        // Tile Coordinates (3, 1), Branch to Sub-list, Store Multi-sample Resolved Tile Color
        // Buffer (§9 Table 38), as a rendering list holds them for one tile.
        let list = [115, 3, 1, 17, 0x20, 0x01, 0x00, 0x10, 24];
        let path = std::env::temp_dir().join(format!("xtask-decode-vc4-{}", std::process::id()));
        std::fs::write(&path, list).unwrap();
        let text = run("vc4", &path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(
            text,
            "    0: TILE_COORDINATES TILE_COLUMN_NUMBER=0x3 TILE_ROW_NUMBER=0x1\n\
             \x20   3: BRANCH_TO_SUB_LIST ABSOLUTE_BRANCH_ADDRESS=0x10000120\n\
             \x20   8: STORE_MULTI_SAMPLE_RESOLVED_TILE_COLOR_BUFFER\n"
        );
    }

    #[test]
    fn an_nvidia_pushbuffer_reads_as_named_methods() {
        // REF_CNT = 5 on subchannel 0 (increasing methods, count 1: 1 << 18 | 0x50), then a
        // jump to 0x1000 (J..J01), nvidia-hardware-envytools §2.8.3.
        let text = render("nvidia", &[0x0004_0050, 5, 0x0000_1001]).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "    0: 00040050 INCREASING_METHODS SUBCHANNEL=0x0 x1");
        assert_eq!(lines[1], "    1: 00000005   REF_CNT VALUE=0x5");
        assert_eq!(lines[2], "    2: 00001001 JUMP [DMA mode] TARGET=0x1000");
    }

    #[test]
    fn bad_captures_are_refused() {
        assert!(matches!(dwords(&[1, 2, 3]), Err(DecodeError::NotDwords(3))));
        assert!(matches!(render("fermi", &[]), Err(DecodeError::UnknownFamily(_))));
        let missing = std::env::temp_dir().join("xtask-decode-no-such-file");
        assert!(matches!(run("r5xx", &missing), Err(DecodeError::Read(_))));
    }
}
