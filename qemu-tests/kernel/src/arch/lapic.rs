//! The local APIC (xAPIC, MMIO at the address in IA32_APIC_BASE, identity mapped uncached):
//! software enable, spurious vector, EOI, and the MSI address that targets this CPU.

use baregpu_hal::{MmioRegion, RegisterIo};
use core::ptr::NonNull;
use spin::Once;
use x86_64::registers::model_specific::Msr;

/// Vector of spurious LAPIC interrupts (no EOI).
pub const SPURIOUS_VECTOR: u8 = 0xFF;

const IA32_APIC_BASE: u32 = 0x1B;
const APIC_GLOBAL_ENABLE: u64 = 1 << 11;
const REG_ID: usize = 0x20;
const REG_TPR: usize = 0x80;
const REG_EOI: usize = 0xB0;
const REG_SVR: usize = 0xF0;
const REG_LVT_LINT0: usize = 0x350;
const SVR_ENABLE: u32 = 1 << 8;
const LVT_MASKED: u32 = 1 << 16;

static LAPIC: Once<MmioRegion> = Once::new();

/// Why the local APIC cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, defmt::Format)]
pub enum LapicError {
    /// IA32_APIC_BASE points above the 4 GiB identity map.
    NotMapped(u64),
}

/// Enable the LAPIC: software enable with [`SPURIOUS_VECTOR`], accept every priority, and mask
/// LINT0 (the PIC's virtual-wire input; the PICs are masked too).
pub fn init() -> Result<(), LapicError> {
    let mut msr = Msr::new(IA32_APIC_BASE);
    // SAFETY: IA32_APIC_BASE exists on every x86_64 CPU; reading it has no side effect.
    let base_msr = unsafe { msr.read() };
    let base = base_msr & 0x000F_FFFF_FFFF_F000;
    if base >= 1 << 32 {
        return Err(LapicError::NotMapped(base));
    }
    if base_msr & APIC_GLOBAL_ENABLE == 0 {
        // SAFETY: setting the global enable bit keeps the base; the APIC then decodes it.
        unsafe { msr.write(base_msr | APIC_GLOBAL_ENABLE) };
    }
    let ptr = NonNull::new(base as *mut u32).ok_or(LapicError::NotMapped(base))?;
    // SAFETY: the 4 KiB LAPIC page lies in the uncached 3..4 GiB part of the boot identity map
    // and is accessed only through this region.
    let lapic = LAPIC.call_once(|| unsafe { MmioRegion::new(ptr, 0x1000) });
    lapic.write32(REG_TPR, 0);
    lapic.write32(REG_LVT_LINT0, lapic.read32(REG_LVT_LINT0) | LVT_MASKED);
    lapic.write32(REG_SVR, SVR_ENABLE | u32::from(SPURIOUS_VECTOR));
    Ok(())
}

/// Signal end of interrupt (after every non-spurious LAPIC-delivered interrupt).
pub fn eoi() {
    if let Some(lapic) = LAPIC.get() {
        lapic.write32(REG_EOI, 0);
    }
}

/// APIC ID of this CPU.
pub fn id() -> u8 {
    LAPIC.get().map_or(0, |l| (l.read32(REG_ID) >> 24) as u8)
}

/// The MSI message that delivers `vector` to this CPU (fixed, edge, physical destination).
pub fn msi_message(vector: u8) -> baregpu_platform::msi::MsiMessage {
    baregpu_platform::msi::MsiMessage::x86_lapic(id(), vector)
}
