//! The fields of a QPU instruction the shader rules read (broadcom-videocore-iv-3d §3: the
//! ALU, load-immediate and branch encodings, Table 4 signals, Table 14 register addresses).
//! The document's encoding figure is garbled in its text; the bit positions are those of Mesa
//! vc4_qpu_defines.h, checked against the document's field widths. To be replaced by the
//! decoder of the project's QPU assembler once it exists.

/// Table 4 signals the validator tells apart.
pub(crate) mod sig {
    /// Software breakpoint.
    pub const BREAKPOINT: u8 = 0;
    /// No signal.
    pub const NONE: u8 = 1;
    /// Thread switch (not last).
    pub const THREAD_SWITCH: u8 = 2;
    /// Program end (thread end).
    pub const PROG_END: u8 = 3;
    /// Last thread switch.
    pub const LAST_THREAD_SWITCH: u8 = 6;
    /// Coverage load from the tile buffer.
    pub const COVERAGE_LOAD: u8 = 7;
    /// Colour load and program end.
    pub const COLOR_LOAD_END: u8 = 9;
    /// Alpha-mask load from the tile buffer.
    pub const ALPHA_MASK_LOAD: u8 = 12;
    /// ALU instruction whose raddr_b is a small immediate.
    pub const SMALL_IMM: u8 = 13;
    /// Load immediate.
    pub const LOAD_IMM: u8 = 14;
    /// Branch.
    pub const BRANCH: u8 = 15;
}

/// Table 14 addresses the validator tells apart.
pub(crate) mod reg {
    /// Register file A/B entries are 0..32.
    pub const FILE_END: u8 = 32;
    /// A threaded shader has half the register file: entries 0..16 (§3, "Threads").
    pub const THREADED_FILE_END: u8 = 16;
    /// Read: UNIFORM_READ (both files).
    pub const UNIFORM_READ: u8 = 32;
    /// Write: accumulators r0..r3.
    pub const ACC0: u8 = 32;
    /// Write: TMU_NOSWAP.
    pub const TMU_NOSWAP: u8 = 36;
    /// Write: HOST_INT.
    pub const HOST_INT: u8 = 38;
    /// Write: NOP (no write).
    pub const NOP: u8 = 39;
    /// Write: UNIFORMS_ADDRESS.
    pub const UNIFORMS_ADDRESS: u8 = 40;
    /// Write: TLB_ALPHA_MASK.
    pub const TLB_ALPHA_MASK: u8 = 47;
    /// Write: VPM_LD_ADDR (A) / VPM_ST_ADDR (B): VPM DMA addresses.
    pub const VPM_DMA_ADDR: u8 = 50;
    /// Write: MUTEX_RELEASE.
    pub const MUTEX_RELEASE: u8 = 51;
    /// Write: TMU0_S, the first TMU register (TMU0_S..TMU1_B are 56..64).
    pub const TMU0_S: u8 = 56;
    /// Write: TMU1_S.
    pub const TMU1_S: u8 = 60;
    /// One past TMU1_B.
    pub const TMU_END: u8 = 64;
}

/// Add-ALU opcode `add` (integer add; §3 Table 12).
pub(crate) const OP_ADD_ADD: u8 = 12;
/// Condition code "always" (§3 Table 2).
pub(crate) const COND_ALWAYS: u8 = 1;
/// ALU input mux: accumulators r0..r3 are 0..4, r4 4, r5 5, register file A 6, B 7 (§3
/// Table 3).
pub(crate) const MUX_A: u8 = 6;
/// See [`MUX_A`].
pub(crate) const MUX_B: u8 = 7;

/// One instruction, two little-endian words (low first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Inst(pub u64);

const fn bits(v: u64, lsb: u32, width: u32) -> u8 {
    ((v >> lsb) & ((1 << width) - 1)) as u8
}

impl Inst {
    /// The instruction at byte `at` of `code` (which holds 8 bytes there).
    pub fn at(code: &[u8], at: usize) -> Inst {
        let mut b = [0u8; 8];
        b.copy_from_slice(&code[at..at + 8]);
        Inst(u64::from_le_bytes(b))
    }
    pub const fn sig(self) -> u8 {
        bits(self.0, 60, 4)
    }
    /// Load-immediate type (0: one 32-bit value), or the ALU unpack field.
    pub const fn unpack(self) -> u8 {
        bits(self.0, 57, 3)
    }
    pub const fn pm(self) -> bool {
        bits(self.0, 56, 1) != 0
    }
    pub const fn pack(self) -> u8 {
        bits(self.0, 52, 4)
    }
    pub const fn cond_add(self) -> u8 {
        bits(self.0, 49, 3)
    }
    pub const fn cond_mul(self) -> u8 {
        bits(self.0, 46, 3)
    }
    /// Write swap: the add unit writes file B, the mul unit file A.
    pub const fn ws(self) -> bool {
        bits(self.0, 44, 1) != 0
    }
    pub const fn waddr_add(self) -> u8 {
        bits(self.0, 38, 6)
    }
    pub const fn waddr_mul(self) -> u8 {
        bits(self.0, 32, 6)
    }
    pub const fn op_add(self) -> u8 {
        bits(self.0, 24, 5)
    }
    pub const fn raddr_a(self) -> u8 {
        bits(self.0, 18, 6)
    }
    pub const fn raddr_b(self) -> u8 {
        bits(self.0, 12, 6)
    }
    pub const fn add_a(self) -> u8 {
        bits(self.0, 9, 3)
    }
    pub const fn add_b(self) -> u8 {
        bits(self.0, 6, 3)
    }
    /// Load-immediate value / branch target (the low word).
    pub const fn immediate(self) -> u32 {
        self.0 as u32
    }
    /// Branch: relative to PC+4 (§3 Table 10 `rel`).
    pub const fn branch_rel(self) -> bool {
        bits(self.0, 51, 1) != 0
    }
    /// Branch: adds register file A element 0 (§3 Table 10 `reg`).
    pub const fn branch_reg(self) -> bool {
        bits(self.0, 50, 1) != 0
    }
    /// Whether the instruction is an ALU one (reads registers through its muxes).
    pub const fn is_alu(self) -> bool {
        !matches!(self.sig(), sig::LOAD_IMM | sig::BRANCH)
    }
    /// Whether raddr_b is a register read (not a small immediate).
    pub const fn reads_b(self) -> bool {
        self.is_alu() && self.sig() != sig::SMALL_IMM
    }
    /// Whether the ALU instruction reads a uniform (through either register file address).
    pub const fn reads_uniform(self) -> bool {
        self.is_alu()
            && (self.raddr_a() == reg::UNIFORM_READ
                || (self.reads_b() && self.raddr_b() == reg::UNIFORM_READ))
    }
    /// The two writes: (address, file B?) of the add unit, then of the mul unit.
    pub const fn writes(self) -> [(u8, bool); 2] {
        [(self.waddr_add(), self.ws()), (self.waddr_mul(), !self.ws())]
    }
}
