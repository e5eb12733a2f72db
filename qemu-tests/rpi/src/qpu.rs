//! The one fragment shader the image needs on real hardware: every fragment gets one constant
//! colour. Four QPU instructions, encoded from broadcom-videocore-iv-3d §3 ("QPU Instruction
//! Encoding": Table 4 signals, Table 2 conditions, the register address map for the write
//! addresses); the bit positions of the fields, which the document's encoding figure does not
//! print legibly, are Mesa's vc4_qpu_defines.h. Until a QPU assembler crate lands, this is the
//! image's only QPU code (the user-program demo waits for that crate; see README.md).

/// Signal field values (§3, Table 4).
mod sig {
    /// No signal.
    pub const NONE: u64 = 1;
    /// Program end (thread end); two delay-slot instructions follow.
    pub const PROGRAM_END: u64 = 3;
    /// Scoreboard unlock.
    pub const SCOREBOARD_UNLOCK: u64 = 5;
    /// Load immediate (the low 32 bits are the value).
    pub const LOAD_IMMEDIATE: u64 = 14;
}

/// Condition codes (§3, Table 2).
mod cond {
    /// Never (the ALU is gated).
    pub const NEVER: u64 = 0;
    /// Always.
    pub const ALWAYS: u64 = 1;
}

/// Write addresses (§3, register address map: the same in both register file spaces).
mod waddr {
    /// The tile buffer colour of every sample.
    pub const TLB_COLOUR_ALL: u64 = 46;
    /// No write.
    pub const NOP: u64 = 39;
}

/// Field positions in the 64-bit instruction (Mesa vc4_qpu_defines.h).
const SIG_SHIFT: u32 = 60;
const COND_ADD_SHIFT: u32 = 49;
const COND_MUL_SHIFT: u32 = 46;
const WADDR_ADD_SHIFT: u32 = 38;
const WADDR_MUL_SHIFT: u32 = 32;
/// Read address and input mux fields of an ALU instruction that reads nothing: raddr_a and
/// raddr_b NOP (39, register address map), every mux r0 (0).
const ALU_NO_READS: u64 = (39 << 18) | (39 << 12);

/// An ALU instruction doing nothing (both conditions never, no writes) with signal `sig`.
const fn alu_nop(sig: u64) -> u64 {
    (sig << SIG_SHIFT)
        | (cond::NEVER << COND_ADD_SHIFT)
        | (cond::NEVER << COND_MUL_SHIFT)
        | (waddr::NOP << WADDR_ADD_SHIFT)
        | (waddr::NOP << WADDR_MUL_SHIFT)
        | ALU_NO_READS
}

/// Load the 32-bit `value` into `waddr_add` through the add pipe (§3 "Load Immediate
/// Instructions", type 0: replicated to all 16 elements).
const fn load_immediate(waddr_add: u64, value: u32) -> u64 {
    (sig::LOAD_IMMEDIATE << SIG_SHIFT)
        | (cond::ALWAYS << COND_ADD_SHIFT)
        | (cond::NEVER << COND_MUL_SHIFT)
        | (waddr_add << WADDR_ADD_SHIFT)
        | (waddr::NOP << WADDR_MUL_SHIFT)
        | value as u64
}

/// Instructions of [`constant_colour`].
pub const CONSTANT_COLOUR_LEN: usize = 4;

/// A fragment shader writing `pixel` (the frame buffer's 32-bit word) to every sample: the
/// colour straight into the tile buffer (the first tile-buffer access waits for the scoreboard
/// implicitly, §3 "Signaling Bits"), then program end and its two delay slots, the last
/// unlocking the scoreboard. The last three instructions touch no uniform, varying or VPM (§3
/// "Program End" rules).
pub const fn constant_colour(pixel: u32) -> [u64; CONSTANT_COLOUR_LEN] {
    [
        load_immediate(waddr::TLB_COLOUR_ALL, pixel),
        alu_nop(sig::PROGRAM_END),
        alu_nop(sig::NONE),
        alu_nop(sig::SCOREBOARD_UNLOCK),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_encoding_matches_the_documented_nop_and_thread_end_words() {
        // §3's NOP (`nop ; nop`) and program end words as Mesa disassembles them: high word
        // 0x100009E7 / 0x300009E7, low word 0x009E7000.
        assert_eq!(alu_nop(sig::NONE), 0x1000_09E7_009E_7000);
        assert_eq!(alu_nop(sig::PROGRAM_END), 0x3000_09E7_009E_7000);
        let shader = constant_colour(0xFF00_FF00);
        assert_eq!(shader[0] >> SIG_SHIFT, sig::LOAD_IMMEDIATE);
        assert_eq!((shader[0] >> WADDR_ADD_SHIFT) & 0x3F, waddr::TLB_COLOUR_ALL);
        assert_eq!(shader[0] as u32, 0xFF00_FF00);
        assert_eq!(shader[3] >> SIG_SHIFT, sig::SCOREBOARD_UNLOCK);
    }
}
