//! The MicroEngine RAM and its host access ports (§5.12, §5.13, §11.1 `CP_ME_RAM_*`).

use crate::microcode::{self, KnownImage};
use baregpu_regs::r5xx::cp::{CP_ME_RAM_ADDR, CP_ME_RAM_DATAH};
use std::cell::Cell;
use std::ops::Range;

/// Entries in the MicroEngine RAM: `CP_ME_RAM_ADDR` is 8 bits wide (§11.1); the R520 image
/// `radeon/R520_cp.bin` holds 256 entries of 8 bytes (Linux r100.c).
pub const ME_RAM_ENTRIES: usize = 1 << CP_ME_RAM_ADDR::ME_RAM_ADDR.width;

/// Bits of one entry: "a 40-bit holding register which concatenates the lower 8-bits of the
/// DATAH value to the top of the 32-bit DATAL value" (§5.12).
pub const ME_RAM_ENTRY_MASK: u64 = (1 << (32 + CP_ME_RAM_DATAH::ME_RAM_DATAH.width)) - 1;

/// The four WAIT_SEMAPHORE semaphores, "microcode ram slots set aside for use as semaphores"
/// at 0xFC-0xFF (§6.2.4.1): data the host and the CP write while the ME runs, not code.
pub const SEMAPHORE_SLOTS: Range<usize> = 0xFC..ME_RAM_ENTRIES;

/// The RAM, the shared address register and the 40-bit holding register.
///
/// - Write path (§5.12): `CP_ME_RAM_ADDR` loads the address and selects write mode;
///   `CP_ME_RAM_DATAH` loads holding bits 39:32; `CP_ME_RAM_DATAL` supplies bits 31:0, commits
///   the 40-bit value at the address and increments the address.
/// - Read path (§5.13): `CP_ME_RAM_RADDR` (a write-only mirror of the same address) selects read
///   mode, loads the entry into the holding register and increments the address; a `DATAH`
///   read returns holding bits 39:32, a `DATAL` read returns bits 31:0 and then loads the next
///   entry and increments again.
/// - The address wraps at 256 (it is an 8-bit field).
/// - Model decisions: `DATAH`/`DATAL` writes in read mode are ignored (the RAM access circuitry
///   is in read mode, §11.1 `ME_RAM_RADDR`); `DATAH`/`DATAL` reads in write mode return the
///   holding register without side effects.
#[derive(Debug, Clone)]
pub(crate) struct MeRam {
    entries: [u64; ME_RAM_ENTRIES],
    written: [bool; ME_RAM_ENTRIES],
    address: u8,
    /// The write path's auto-increment wrapped past the last entry since the address was set:
    /// the next commit would land past the end of the RAM.
    wrapped: bool,
    read_mode: bool,
    holding: u64,
    /// The known image the code entries hold (`None` inside: none), or `None` when a code
    /// entry changed since it was last computed.
    identity: Cell<Option<Option<&'static KnownImage>>>,
}

impl MeRam {
    /// Power-on: RAM zero and nothing written.
    pub(crate) const fn new() -> Self {
        MeRam {
            entries: [0; ME_RAM_ENTRIES],
            written: [false; ME_RAM_ENTRIES],
            address: 0,
            wrapped: false,
            read_mode: false,
            holding: 0,
            identity: Cell::new(Some(None)),
        }
    }

    /// CP soft reset: the access ports return to their reset state, the RAM keeps its contents.
    pub(crate) fn reset_ports(&mut self) {
        self.address = 0;
        self.wrapped = false;
        self.read_mode = false;
        self.holding = 0;
    }

    /// `CP_ME_RAM_ADDR` write.
    pub(crate) fn set_write_address(&mut self, address: u8) {
        self.address = address;
        self.wrapped = false;
        self.read_mode = false;
    }

    /// `CP_ME_RAM_RADDR` write; `flip` is the fault injection (corrupt readback of one entry).
    pub(crate) fn set_read_address(&mut self, address: u8, flip: Option<u8>) {
        self.address = address;
        self.read_mode = true;
        self.load_holding(flip);
    }

    fn load_holding(&mut self, flip: Option<u8>) {
        let mut value = self.entries[usize::from(self.address)];
        if flip == Some(self.address) {
            value ^= 1;
        }
        self.holding = value;
        self.address = self.address.wrapping_add(1);
    }

    /// The shared address register (what `CP_ME_RAM_ADDR` reads).
    pub(crate) fn address(&self) -> u8 {
        self.address
    }

    /// `CP_ME_RAM_DATAH` write.
    pub(crate) fn write_high(&mut self, value: u32) {
        if !self.read_mode {
            let high = CP_ME_RAM_DATAH::ME_RAM_DATAH.get(value);
            self.holding = (self.holding & 0xFFFF_FFFF) | (u64::from(high) << 32);
        }
    }

    /// `CP_ME_RAM_DATAL` write: commit and auto-increment. `false`: the commit would land past
    /// the last entry (the auto-increment wrapped since `CP_ME_RAM_ADDR` was written), and
    /// nothing is stored (a model decision: the upload ran past the end of the RAM).
    pub(crate) fn write_low(&mut self, value: u32) -> bool {
        if self.read_mode {
            return true;
        }
        if self.wrapped {
            return false;
        }
        self.holding = (self.holding & !0xFFFF_FFFF) | u64::from(value);
        let a = usize::from(self.address);
        self.entries[a] = self.holding & ME_RAM_ENTRY_MASK;
        self.written[a] = true;
        if !SEMAPHORE_SLOTS.contains(&a) {
            self.identity.set(None);
        }
        self.address = self.address.wrapping_add(1);
        self.wrapped = self.address == 0;
        true
    }

    /// Whether the write-path address is a code entry (not a semaphore slot): the next `DATAL`
    /// write would change microcode.
    pub(crate) fn addresses_code(&self) -> bool {
        !self.read_mode && !SEMAPHORE_SLOTS.contains(&usize::from(self.address))
    }

    /// `CP_ME_RAM_DATAH` read.
    pub(crate) fn read_high(&self) -> u32 {
        CP_ME_RAM_DATAH::ME_RAM_DATAH.get((self.holding >> 32) as u32)
    }

    /// `CP_ME_RAM_DATAL` read: in read mode, loads the next entry and auto-increments.
    pub(crate) fn read_low(&mut self, flip: Option<u8>) -> u32 {
        let low = self.holding as u32;
        if self.read_mode {
            self.load_holding(flip);
        }
        low
    }

    /// One entry (white-box).
    pub(crate) fn entry(&self, index: u8) -> u64 {
        self.entries[usize::from(index)]
    }

    /// Low 32 bits of an entry (the WAIT_SEMAPHORE slots 0xFC-0xFF, §6.2.4.1).
    pub(crate) fn semaphore(&self, index: u8) -> u32 {
        self.entries[usize::from(index)] as u32
    }

    /// Set the low 32 bits of an entry (WAIT_SEMAPHORE's optional reset value, §6.2.4.1).
    pub(crate) fn set_semaphore(&mut self, index: u8, value: u32) {
        let e = &mut self.entries[usize::from(index)];
        *e = (*e & !0xFFFF_FFFF) | u64::from(value);
    }

    /// The known microcode image the RAM holds ([`crate::microcode`]): every code entry
    /// written since power-on and the image's SHA-256 in the table. Computed once per change.
    ///
    /// §5.12 defines no "loaded" flag; a real ME with a partial, blank or foreign image executes
    /// something else than §6 describes. The model refuses to run instead, which is what a
    /// driver can observe: RPTR never moves.
    pub(crate) fn identity(&self) -> Option<&'static KnownImage> {
        if let Some(known) = self.identity.get() {
            return known;
        }
        let complete =
            self.written.iter().enumerate().all(|(i, &w)| w || SEMAPHORE_SLOTS.contains(&i));
        let known = if complete { microcode::identify(&self.entries) } else { None };
        self.identity.set(Some(known));
        known
    }
}
