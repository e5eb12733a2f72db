//! The two chips the model emulates and the microcode each runs.
//!
//! The model cannot execute PFP, ME or RLC microcode (their instruction sets are not
//! documented). What amd-evergreen-cayman-acceleration §9 describes is what the CP does with
//! the microcode AMD ships, so the CP parses packets only when the PFP and ME RAMs hold such an
//! image for the chip, recognised by SHA-256 ([`KnownImage`]); the interrupt handler writes
//! entries only when the RLC RAM holds the chip's RLC image (Linux radeon r600.c
//! `r600_irq_init` loads the RLC before it enables the IH). Any other image (reversed, one bit
//! flipped, truncated and padded, the other chip's) runs nothing.
//!
//! # The bytes the model hashes
//!
//! A RAM of N words is hashed as the N words in upload order, each big-endian: exactly the
//! firmware file the Linux radeon driver (evergreen.c / ni.c `cp_load_microcode`,
//! r600.c `r600_rlc_resume`) streams word by word into the upload port, so the SHA-256 is the
//! file's `sha256sum`. Sizes (dwords): Linux radeon evergreen.c / ni.c
//! (`EVERGREEN_PFP_UCODE_SIZE` 1120, `EVERGREEN_PM4_UCODE_SIZE` 1376, `EVERGREEN_RLC_UCODE_SIZE`
//! 768; `CAYMAN_PFP_UCODE_SIZE` 2176, `CAYMAN_PM4_UCODE_SIZE` 2176, `CAYMAN_RLC_UCODE_SIZE` 1024).

use crate::shader::Chip;
use sha2::{Digest, Sha256};

/// Where the known images come from.
pub const FIRMWARE_SOURCE: &str =
    "Debian firmware-amd-graphics 20230210-5 (bookworm, non-free-firmware), from linux-firmware";

/// An emulated chip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Asic {
    /// Cypress (Radeon HD 5870), Evergreen: PCI 1002:6898.
    Cypress,
    /// Cayman (Radeon HD 6970), Northern Islands: PCI 1002:6718.
    Cayman,
}

/// One of the three microcode RAMs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Engine {
    /// Prefetch parser (`CP_PFP_UCODE_ADDR` / `CP_PFP_UCODE_DATA`).
    Pfp,
    /// Micro engine (`CP_ME_RAM_WADDR` / `CP_ME_RAM_RADDR` / `CP_ME_RAM_DATA`).
    Me,
    /// Run-list controller (`RLC_UCODE_ADDR` / `RLC_UCODE_DATA`).
    Rlc,
}

/// A microcode image the model runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownImage {
    /// The firmware file, relative to `/lib/firmware`.
    pub file: &'static str,
    /// Its size in dwords (= the RAM the model gives the engine on that chip).
    pub words: usize,
    /// SHA-256 of the file.
    pub sha256: [u8; 32],
}

const fn hex(s: &str) -> [u8; 32] {
    let b = s.as_bytes();
    let mut out = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        out[i] = (nibble(b[2 * i]) << 4) | nibble(b[2 * i + 1]);
        i += 1;
    }
    out
}

const fn nibble(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => panic!("not a lower-case hex digit"),
    }
}

const CYPRESS_PFP: KnownImage = KnownImage {
    file: "radeon/CYPRESS_pfp.bin",
    words: 1120,
    sha256: hex("5f4e98e1bd41bbbba68fb4c1b8761ab0fd7c2f9f4f088c44b1464b7c2e08a9e2"),
};
const CYPRESS_ME: KnownImage = KnownImage {
    file: "radeon/CYPRESS_me.bin",
    words: 1376,
    sha256: hex("3890437894d09dbb0b99900e661a8a0d3ad264a650b6ad2d84e5b8e1156cc9a0"),
};
const CYPRESS_RLC: KnownImage = KnownImage {
    file: "radeon/CYPRESS_rlc.bin",
    words: 768,
    sha256: hex("937283012c1f07fc597240df91148906f2e6e68c8a2cb66b406db8b014c2f441"),
};
const CAYMAN_PFP: KnownImage = KnownImage {
    file: "radeon/CAYMAN_pfp.bin",
    words: 2176,
    sha256: hex("8fbe3f47f1499f6dd683245bccee38560d5d476aac488344d13aba45832ac4d9"),
};
const CAYMAN_ME: KnownImage = KnownImage {
    file: "radeon/CAYMAN_me.bin",
    words: 2176,
    sha256: hex("2cc5431d404f4d8e27eaa4f157b8c6481680dc87ecfc00b5f0f2a917c6dcf3c7"),
};
const CAYMAN_RLC: KnownImage = KnownImage {
    file: "radeon/CAYMAN_rlc.bin",
    words: 1024,
    sha256: hex("71aac4ac9fea69a4d9db6d58604ae8473502a49168af5629a645bacc21bc0943"),
};

impl Asic {
    /// Both chips.
    pub const ALL: [Asic; 2] = [Asic::Cypress, Asic::Cayman];

    /// PCI device ID (vendor 0x1002; Linux drm_pciids.h: 0x6898 HD 5870, 0x6718 HD 6970).
    pub const fn device_id(self) -> u16 {
        match self {
            Asic::Cypress => 0x6898,
            Asic::Cayman => 0x6718,
        }
    }

    /// The shader core's instruction-set variant.
    pub const fn shader_chip(self) -> Chip {
        match self {
            Asic::Cypress => Chip::Evergreen,
            Asic::Cayman => Chip::Cayman,
        }
    }

    /// The register database's chipset.
    pub const fn chipset(self) -> baregpu_regs::evergreen::Chipset {
        match self {
            Asic::Cypress => baregpu_regs::evergreen::Chipset::CYPRESS,
            Asic::Cayman => baregpu_regs::evergreen::Chipset::CAYMAN,
        }
    }

    /// The image `engine` runs on this chip.
    pub const fn image(self, engine: Engine) -> &'static KnownImage {
        match (self, engine) {
            (Asic::Cypress, Engine::Pfp) => &CYPRESS_PFP,
            (Asic::Cypress, Engine::Me) => &CYPRESS_ME,
            (Asic::Cypress, Engine::Rlc) => &CYPRESS_RLC,
            (Asic::Cayman, Engine::Pfp) => &CAYMAN_PFP,
            (Asic::Cayman, Engine::Me) => &CAYMAN_ME,
            (Asic::Cayman, Engine::Rlc) => &CAYMAN_RLC,
        }
    }
}

/// A microcode RAM: the chip's image size in words, an address register with auto-increment on
/// both the write and the read path, and the identity of what it holds.
#[derive(Debug, Clone)]
pub(crate) struct UcodeRam {
    words: Vec<u32>,
    known: &'static KnownImage,
    pub(crate) write_address: usize,
    pub(crate) read_address: usize,
    /// Cached identity (`None` = recompute after a write).
    identity: Option<bool>,
}

impl UcodeRam {
    pub(crate) fn new(known: &'static KnownImage) -> Self {
        Self {
            words: vec![0; known.words],
            known,
            write_address: 0,
            read_address: 0,
            identity: None,
        }
    }

    /// Store at the write address and advance it. A word beyond the RAM is dropped (`false`).
    pub(crate) fn write(&mut self, value: u32) -> bool {
        let a = self.write_address;
        self.write_address = a.saturating_add(1);
        let Some(slot) = self.words.get_mut(a) else { return false };
        *slot = value;
        self.identity = None;
        true
    }

    /// The word at the read address (0 beyond the RAM), advancing it; `corrupt` flips bit 0 of
    /// that word index (an injected read-back fault).
    pub(crate) fn read(&mut self, corrupt: Option<u16>) -> u32 {
        let a = self.read_address;
        self.read_address = a.saturating_add(1);
        let v = self.words.get(a).copied().unwrap_or(0);
        if corrupt == Some(a as u16) { v ^ 1 } else { v }
    }

    /// Whether the RAM holds exactly the chip's known image.
    pub(crate) fn known(&mut self) -> bool {
        *self.identity.get_or_insert_with(|| {
            let mut h = Sha256::new();
            for w in &self.words {
                h.update(w.to_be_bytes());
            }
            let digest: [u8; 32] = h.finalize().into();
            digest == self.known.sha256
        })
    }

    /// Word `i` (white-box).
    pub(crate) fn word(&self, i: usize) -> Option<u32> {
        self.words.get(i).copied()
    }
}
