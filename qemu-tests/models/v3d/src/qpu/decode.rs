//! The QPU instruction decoder (§3 "QPU Instruction Encoding", Tables 1-13). The document's
//! Figure 3 is garbled; the bit positions are those of Mesa's public vc4_qpu_defines.h:
//! sig 63:60, unpack 59:57, pm 56, pack 55:52, cond_add 51:49, cond_mul 48:46, sf 45, ws 44,
//! waddr_add 43:38, waddr_mul 37:32, op_mul 31:29, op_add 28:24, raddr_a 23:18, raddr_b 17:12,
//! add_a 11:9, add_b 8:6, mul_a 5:3, mul_b 2:0; load immediate: mode 59:57, immediate 31:0;
//! branch: cond_br 55:52, rel 51, reg 50, raddr_a 49:45, immediate 31:0. Semaphore: load
//! immediate mode 4, semaphore number in immediate bits 3:0, sa (acquire) bit 4.

use super::error::QpuFaultKind;

/// Signal values (§3 Table 4).
pub mod sig {
    /// Software breakpoint.
    pub const BREAKPOINT: u8 = 0;
    /// No signal.
    pub const NONE: u8 = 1;
    /// Thread switch (not last).
    pub const THREAD_SWITCH: u8 = 2;
    /// Program end (thread end).
    pub const PROGRAM_END: u8 = 3;
    /// Wait for scoreboard.
    pub const WAIT_SCOREBOARD: u8 = 4;
    /// Scoreboard unlock.
    pub const SCOREBOARD_UNLOCK: u8 = 5;
    /// Last thread switch.
    pub const LAST_THREAD_SWITCH: u8 = 6;
    /// Coverage load from the tile buffer to r4.
    pub const COVERAGE_LOAD: u8 = 7;
    /// Colour load from the tile buffer to r4.
    pub const COLOUR_LOAD: u8 = 8;
    /// Colour load and program end.
    pub const COLOUR_LOAD_END: u8 = 9;
    /// Load data from TMU0 to r4.
    pub const LOAD_TMU0: u8 = 10;
    /// Load data from TMU1 to r4.
    pub const LOAD_TMU1: u8 = 11;
    /// Alpha-mask load from the tile buffer to r4.
    pub const ALPHA_MASK_LOAD: u8 = 12;
    /// ALU instruction with a small immediate in raddr_b.
    pub const SMALL_IMMEDIATE: u8 = 13;
    /// Load immediate (and semaphore).
    pub const LOAD_IMMEDIATE: u8 = 14;
    /// Branch.
    pub const BRANCH: u8 = 15;
}

/// The write side every instruction kind shares (ALU, load immediate, semaphore, branch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Writes {
    /// Pack/unpack select.
    pub pm: bool,
    /// Pack mode.
    pub pack: u8,
    /// Add-pipe condition (§3 Table 2).
    pub cond_add: u8,
    /// Mul-pipe condition.
    pub cond_mul: u8,
    /// Set flags.
    pub sf: bool,
    /// Write swap: add writes regfile B space, mul regfile A space.
    pub ws: bool,
    /// Add-pipe write address.
    pub waddr_add: u8,
    /// Mul-pipe write address.
    pub waddr_mul: u8,
}

/// Second operand source of an ALU instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceB {
    /// Read address for regfile B.
    Register(u8),
    /// Small immediate (§3 Table 5), value 0..=47, or a rotation (48..=63).
    SmallImmediate(u8),
}

/// A load-immediate flavour (§3 "Load Immediate").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImmediateMode {
    /// The 32-bit value replicated 16 ways.
    Word,
    /// Per-element 2-bit signed values (MS bits in 31:16, LS bits in 15:0).
    PerElementSigned,
    /// Per-element 2-bit unsigned values.
    PerElementUnsigned,
}

/// One decoded instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instruction {
    /// ALU instruction (signals 0-13).
    Alu {
        /// Signal (§3 Table 4).
        sig: u8,
        /// Unpack mode.
        unpack: u8,
        /// Write side.
        w: Writes,
        /// Mul opcode (§3 Table 13).
        op_mul: u8,
        /// Add opcode (§3 Table 12).
        op_add: u8,
        /// Regfile A read address.
        raddr_a: u8,
        /// Regfile B read address or small immediate.
        b: SourceB,
        /// Input muxes: add A, add B, mul A, mul B (§3 Table 3).
        mux: [u8; 4],
    },
    /// Load immediate (signal 14, modes 0, 1, 3).
    LoadImmediate {
        /// Mode.
        mode: ImmediateMode,
        /// Write side.
        w: Writes,
        /// The immediate bits.
        imm: u32,
    },
    /// Semaphore (signal 14, mode 4).
    Semaphore {
        /// Write side.
        w: Writes,
        /// Decrement (acquire) instead of increment.
        acquire: bool,
        /// Semaphore number.
        number: u8,
    },
    /// Branch (signal 15).
    Branch {
        /// Condition (§3 Table 11).
        cond: u8,
        /// Relative to PC+4... of the instruction after the delay slots (see the executor).
        rel: bool,
        /// Add regfile A element 0.
        reg: bool,
        /// Regfile A read address (5 bits).
        raddr_a: u8,
        /// Write side (only ws and the write addresses are used).
        w: Writes,
        /// Signed immediate.
        imm: u32,
    },
}

fn bits(word: u64, msb: u32, lsb: u32) -> u8 {
    ((word >> lsb) & ((1 << (msb - lsb + 1)) - 1)) as u8
}

/// Add opcodes §3 Table 12 reserves.
pub fn add_op_reserved(op: u8) -> bool {
    matches!(op, 9..=11 | 25..=29)
}

impl Instruction {
    /// Decode a 64-bit instruction word (stored as two little-endian dwords, low first).
    pub fn decode(word: u64) -> Result<Instruction, QpuFaultKind> {
        let sig = bits(word, 63, 60);
        let w = Writes {
            pm: bits(word, 56, 56) != 0,
            pack: bits(word, 55, 52),
            cond_add: bits(word, 51, 49),
            cond_mul: bits(word, 48, 46),
            sf: bits(word, 45, 45) != 0,
            ws: bits(word, 44, 44) != 0,
            waddr_add: bits(word, 43, 38),
            waddr_mul: bits(word, 37, 32),
        };
        let imm = word as u32;
        match sig {
            sig::BRANCH => {
                let cond = bits(word, 55, 52);
                if (12..=14).contains(&cond) {
                    return Err(QpuFaultKind::ReservedEncoding { field: "cond_br", value: cond });
                }
                Ok(Instruction::Branch {
                    cond,
                    rel: bits(word, 51, 51) != 0,
                    reg: bits(word, 50, 50) != 0,
                    raddr_a: bits(word, 49, 45),
                    w: Writes { pm: false, pack: 0, cond_add: 1, cond_mul: 1, sf: false, ..w },
                    imm,
                })
            }
            sig::LOAD_IMMEDIATE => {
                let mode = match bits(word, 59, 57) {
                    0 => ImmediateMode::Word,
                    1 => ImmediateMode::PerElementSigned,
                    3 => ImmediateMode::PerElementUnsigned,
                    4 => {
                        return Ok(Instruction::Semaphore {
                            w,
                            acquire: imm & 0x10 != 0,
                            number: (imm & 0xF) as u8,
                        });
                    }
                    m => {
                        return Err(QpuFaultKind::ReservedEncoding {
                            field: "load immediate mode",
                            value: m,
                        });
                    }
                };
                Self::check_pack(w)?;
                Ok(Instruction::LoadImmediate { mode, w, imm })
            }
            _ => {
                let op_add = bits(word, 28, 24);
                if add_op_reserved(op_add) {
                    return Err(QpuFaultKind::ReservedEncoding { field: "op_add", value: op_add });
                }
                Self::check_pack(w)?;
                let raddr_b = bits(word, 17, 12);
                Ok(Instruction::Alu {
                    sig,
                    unpack: bits(word, 59, 57),
                    w,
                    op_mul: bits(word, 31, 29),
                    op_add,
                    raddr_a: bits(word, 23, 18),
                    b: if sig == sig::SMALL_IMMEDIATE {
                        SourceB::SmallImmediate(raddr_b)
                    } else {
                        SourceB::Register(raddr_b)
                    },
                    mux: [bits(word, 11, 9), bits(word, 8, 6), bits(word, 5, 3), bits(word, 2, 0)],
                })
            }
        }
    }

    /// §3 Table 9: with pm set, mul pack modes 1-2 and 8-15 are reserved.
    fn check_pack(w: Writes) -> Result<(), QpuFaultKind> {
        if w.pm && matches!(w.pack, 1 | 2 | 8..=15) {
            return Err(QpuFaultKind::ReservedEncoding { field: "mul pack", value: w.pack });
        }
        Ok(())
    }

    /// The write side.
    pub fn writes(&self) -> Writes {
        match *self {
            Instruction::Alu { w, .. }
            | Instruction::LoadImmediate { w, .. }
            | Instruction::Semaphore { w, .. }
            | Instruction::Branch { w, .. } => w,
        }
    }

    /// The signal field.
    pub fn sig(&self) -> u8 {
        match self {
            Instruction::Alu { sig, .. } => *sig,
            Instruction::LoadImmediate { .. } | Instruction::Semaphore { .. } => {
                sig::LOAD_IMMEDIATE
            }
            Instruction::Branch { .. } => sig::BRANCH,
        }
    }
}
