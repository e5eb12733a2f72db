//! How a CTM command buffer reaches the device, and why it is not a PM4 indirect buffer.
//!
//! The CTM guide leaves submission to the "ATI CTM Device Interface" (§2.2, ch. 5:
//! `amSubmitCommandBuffer(dev, addr, size)` takes the GPU address of the buffer and its size in
//! 32-bit words), which is not among the project's documents. The CTM opcode words of Table 3
//! have the shape of PM4 type-3 headers (bits 31:30 = 3, `COUNT` in bits 29:16, `IT_OPCODE`
//! in bits 15:8) with opcodes 0x02–0x1C, and some collide with R5xx PM4 type-3 opcodes
//! (amd-r5xx-acceleration §6.2.1): `set_constb_fmt` is 0x10 = `NOP`, `set_out_mask` is 0x19 =
//! `NEXTCHAR`. A CTM buffer therefore cannot be placed in the CP ring or an indirect buffer
//! as-is: the consumer must know it is parsing CTM commands.
//!
//! The project defines the device interface as three CP registers (`CTM_CB_BASE`,
//! `CTM_CB_SIZE`, `CTM_STATUS`, marked "project-defined" in the register database); the R5xx
//! driver's `baregpu_radeon_r5xx::ctm` module writes them from the ring, and the emulated R5xx
//! implements them. This crate stays device-independent: it produces the words
//! ([`CommandBuffer::as_words`]).
//!
//! Two facts every consumer must respect:
//!
//! * Table 3 prints `init_perf_counters` as x'C0010200 and `read_perf_counters` as x'C0010500
//!   (a type-3 `COUNT` of 1, i.e. two body words) while listing one parameter for each; the
//!   builders emit the documented opcode word and the one documented parameter, so a consumer
//!   that trusts `COUNT` would misparse. See [`Opcode::param_count`].
//! * Commands that are not pipelined (Table 3) must follow a `wait_for_idle` and precede the
//!   next `start_program` (§2.2); see [`Opcode::pipelined`].

#[allow(unused_imports)] // for the intra-doc links
use crate::command::{CommandBuffer, Opcode};

/// The range of CTM opcode bytes (bits 15:8 of the opcode words, Table 3).
pub const CTM_OPCODE_RANGE: core::ops::RangeInclusive<u8> = 0x02..=0x1C;

/// R5xx PM4 type-3 opcodes (amd-r5xx-acceleration §6.2.1) that are also CTM opcodes, with the
/// CTM command sharing the byte.
pub const PM4_COLLISIONS: [(u8, &str, &str); 2] =
    [(0x10, "NOP", "set_constb_fmt"), (0x19, "NEXTCHAR", "set_out_mask")];
