//! The DPP executable writer (ctm-guide chapter 4).
//!
//! Layout of the file this module writes (all little endian, every part 4-byte aligned):
//!
//! | offset | contents |
//! |---|---|
//! | 0 | ELF header (52 bytes, §4.1.2) |
//! | 52 | program header 0: `PT_LOAD` of `.text` |
//! | 84 | program header 1: `PT_NOTE` covering all seven notes |
//! | 116 | `.text`: the instructions, 6 words (24 bytes) per slot in the order of r5xx §8.8.1 |
//! | … | `.note`: the seven notes of §4.1.4, in the guide's order |
//! | … | `.shstrtab` |
//! | … | section headers: null, `.text`, `.note`, `.shstrtab` |
//!
//! The seven notes are always all present (an empty list note has `descsz` 0), so a loader never
//! has to fall back on the "acts as if" defaults of §4.1.4.

use crate::isa::{Instruction, MAX_INSTRUCTIONS, WORDS_PER_INST, Words};

/// `ELFOSABI_ATI` (ctm-guide §4.1.2).
pub const ELFOSABI_ATI: u8 = 98;
/// `EM_ATI_R5XX` (ctm-guide §4.1.2).
pub const EM_ATI_R5XX: u16 = 122;
/// `EF_ATI_DPP` (ctm-guide §4.1.2).
pub const EF_ATI_DPP: u32 = 1;
/// `ELF_NOTE_ATI` name, with its terminating NUL: `namesz` is 8 (ctm-guide §4.1.4).
pub const ELF_NOTE_ATI: &[u8; 8] = b"ATI DPP\0";
/// Note types (ctm-guide §4.1.4).
pub mod note_type {
    /// `ELF_NOTE_ATI_PROGINFO`.
    pub const PROGINFO: u32 = 1;
    /// `ELF_NOTE_ATI_INPUTS`.
    pub const INPUTS: u32 = 2;
    /// `ELF_NOTE_ATI_OUTPUTS`.
    pub const OUTPUTS: u32 = 3;
    /// `ELF_NOTE_ATI_CONDOUT`.
    pub const CONDOUT: u32 = 4;
    /// `ELF_NOTE_ATI_FLOAT32CONSTS`.
    pub const FLOAT32CONSTS: u32 = 5;
    /// `ELF_NOTE_ATI_INT32CONSTS`.
    pub const INT32CONSTS: u32 = 6;
    /// `ELF_NOTE_ATI_EARLYEXIT`.
    pub const EARLYEXIT: u32 = 7;
}
/// Words of `dpp_proginfo` (ctm-guide §4.1.4: 28 `Elf32_Word`s).
pub const PROGINFO_WORDS: usize = 28;

const EHDR: usize = 52;
const PHDR: usize = 32;
const SHDR: usize = 40;
const TEXT_OFF: usize = EHDR + 2 * PHDR;
const SHSTRTAB: &[u8] = b"\0.text\0.note\0.shstrtab\0";
const SHSTRTAB_PADDED: usize = (SHSTRTAB.len() + 3) & !3;

/// What the notes declare about a program: which inputs, outputs and constants it references
/// and which loader options it needs. [`ProgramInfo::scan`] derives it from the instructions;
/// callers may widen it (e.g. declare an input the program does not read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ProgramInfo {
    /// Bit n: input n (TEX_ID) is read.
    pub inputs: u16,
    /// Bit n: output n (render target) is written.
    pub outputs: u8,
    /// Bit n: float constant n is referenced (`c<n>`; relative `c[aL+n]` marks n only).
    pub float_consts: [u64; 4],
    /// Bit n: integer constant n is referenced (loop/rep `INT_ADDR`).
    pub int_consts: u32,
    /// Bit n: boolean constant n is referenced (not part of any note; informative).
    pub bool_consts: u32,
    /// Largest temporary register index referenced (`US_PIXSIZE`).
    pub max_temp: u8,
    /// The program writes the conditional output value (`W_OMASK`).
    pub cond_out: bool,
    /// The program can exit early (a `LAST` bit before the final slot, or a texture kill).
    pub early_exit: bool,
    /// The program needs full flow control (loops, subroutines, loop-stack/address-stack ops).
    pub full_flow_control: bool,
    /// Output writes are uncached (UMRT) writes (`US_CONFIG` bit 0).
    pub uncached_output: bool,
}

impl ProgramInfo {
    /// Derives the notes' contents from the instructions.
    pub fn scan(insts: &[Instruction]) -> Self {
        let mut p = Self::default();
        let temp = |p: &mut Self, i: u8| p.max_temp = p.max_temp.max(i);
        let n = insts.len();
        for (pc, inst) in insts.iter().enumerate() {
            match inst {
                Instruction::Alu(a) => {
                    for s in a.rgb_addr.src.iter().chain(a.alpha_addr.src.iter()) {
                        match *s {
                            crate::isa::Source::Temp(t) => temp(&mut p, t.index),
                            crate::isa::Source::Const { index, .. } => {
                                p.float_consts[usize::from(index / 64)] |= 1 << (index % 64)
                            }
                            crate::isa::Source::Inline(_) => {}
                        }
                    }
                    if a.rgb.wmask != 0 {
                        temp(&mut p, a.rgb.dst.index);
                    }
                    if a.alpha.wmask {
                        temp(&mut p, a.alpha.dst.index);
                    }
                    if a.output {
                        if let (crate::isa::Target::Output(t), true) =
                            (a.rgb.target, a.rgb.omask != 0)
                        {
                            p.outputs |= 1 << (t & 3);
                        }
                        if let (crate::isa::Target::Output(t), true) =
                            (a.alpha.target, a.alpha.omask)
                        {
                            p.outputs |= 1 << (t & 3);
                        }
                        p.cond_out |= a.w_omask;
                    }
                    if a.common.last && pc + 1 != n {
                        p.early_exit = true;
                    }
                }
                Instruction::Tex(t) => {
                    temp(&mut p, t.src.index);
                    match t.op {
                        crate::isa::TexOp::Nop => {}
                        crate::isa::TexOp::KillLt0 => p.early_exit = true,
                        _ => {
                            p.inputs |= 1 << (t.input & 15);
                            temp(&mut p, t.dst.index);
                        }
                    }
                }
                Instruction::Fc(f) => {
                    use crate::isa::{AOp, FcOp};
                    if f.op != FcOp::Jump || f.a_op != AOp::None {
                        p.full_flow_control = true;
                    }
                    if matches!(f.op, FcOp::Loop | FcOp::EndLoop | FcOp::Rep | FcOp::EndRep) {
                        p.int_consts |= 1 << f.int_addr;
                    }
                    // The boolean participates only if some JUMP_FUNC entry depends on it.
                    let jf = f.jump_func;
                    if jf & 0x55 != (jf & 0xaa) >> 1 {
                        p.bool_consts |= 1 << f.bool_addr;
                    }
                }
            }
        }
        p
    }
}

/// Why an executable could not be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ElfError {
    /// No instructions: the program needs at least its final OUTPUT instruction.
    Empty,
    /// More than 512 instructions (ctm-guide §3.1).
    TooLong(usize),
    /// The output buffer is too small; `needed` bytes are required.
    BufferTooSmall {
        /// Required size in bytes.
        needed: usize,
    },
}

impl core::fmt::Display for ElfError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Empty => f.write_str("empty program"),
            Self::TooLong(n) => write!(f, "{n} instructions exceed the 512 slots"),
            Self::BufferTooSmall { needed } => write!(f, "buffer too small: {needed} bytes needed"),
        }
    }
}

impl core::error::Error for ElfError {}

fn count_bits(bits: &[u64]) -> usize {
    bits.iter().map(|b| b.count_ones() as usize).sum()
}

fn note_lens(info: &ProgramInfo) -> [usize; 7] {
    [
        PROGINFO_WORDS * 4,
        4 * info.inputs.count_ones() as usize,
        4 * info.outputs.count_ones() as usize,
        4,
        4 * count_bits(&info.float_consts),
        4 * info.int_consts.count_ones() as usize,
        4,
    ]
}

fn notes_len(info: &ProgramInfo) -> usize {
    note_lens(info).iter().map(|d| 12 + 8 + d).sum()
}

/// Size in bytes of the executable for `n_insts` instructions and `info`.
pub fn executable_len(n_insts: usize, info: &ProgramInfo) -> usize {
    TEXT_OFF + n_insts * WORDS_PER_INST * 4 + notes_len(info) + SHSTRTAB_PADDED + 4 * SHDR
}

/// The `dpp_proginfo` structure (ctm-guide §4.1.4) for a program of `n` instructions.
///
/// | word | field | value written |
/// |---|---|---|
/// | 0 | Reserved | 1 |
/// | 1 | `FG_DEPTH_SRC` | bit 0 = `cond_out` (the W output carries the conditional value) |
/// | 2 | `US_CONFIG` | bit 0 = `uncached_output` |
/// | 3 | `US_PIXSIZE` | `max_temp`, the largest register index used (guide: "Largest register used") |
/// | 4 | `US_FC_CTRL` | bit 31 = `full_flow_control` |
/// | 5 | `US_CODE_ADDR` | start 0 in bits 15:0, halt after `n-1` in bits 31:16 |
/// | 6 | `US_CODE_RANGE` | `(n-1) << 16` |
/// | 7 | Reserved | 0xc0 |
/// | 8 | Reserved | 0x20000 |
/// | 9-26 | Reserved | 0 |
/// | 27 | `INSTR_CNT` | `n` |
pub fn proginfo(n: usize, info: &ProgramInfo) -> [u32; PROGINFO_WORDS] {
    let last = n.saturating_sub(1) as u32;
    let mut w = [0u32; PROGINFO_WORDS];
    w[0] = 1;
    w[1] = info.cond_out as u32;
    w[2] = info.uncached_output as u32;
    w[3] = info.max_temp.into();
    w[4] = (info.full_flow_control as u32) << 31;
    w[5] = last << 16;
    w[6] = last << 16;
    w[7] = 0xc0;
    w[8] = 0x0002_0000;
    w[27] = n as u32;
    w
}

struct Out<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl Out<'_> {
    fn u8s(&mut self, b: &[u8]) {
        self.buf[self.pos..self.pos + b.len()].copy_from_slice(b);
        self.pos += b.len();
    }
    fn u16(&mut self, v: u16) {
        self.u8s(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.u8s(&v.to_le_bytes());
    }
    fn note_header(&mut self, descsz: usize, ty: u32) {
        self.u32(ELF_NOTE_ATI.len() as u32);
        self.u32(descsz as u32);
        self.u32(ty);
        self.u8s(ELF_NOTE_ATI);
    }
    fn index_list(&mut self, ty: u32, bits: &[u64]) {
        self.note_header(4 * count_bits(bits), ty);
        for (i, word) in bits.iter().enumerate() {
            for b in 0..64 {
                if word & (1 << b) != 0 {
                    self.u32((i * 64 + b) as u32);
                }
            }
        }
    }
}

/// Writes a DPP executable for `words` (one [`Words`] per slot) into `out`, returning its length.
///
/// ELF header (§4.1.2): `EI_CLASS` = ELFCLASS32, `EI_DATA` = ELFDATA2LSB, `EI_VERSION` = 1,
/// `EI_OSABI` = 98, `EI_ABIVERSION` = 1, `e_type` = ET_EXEC, `e_machine` = 122, `e_version` = 1,
/// `e_entry` = 0, `e_flags` = `EF_ATI_DPP`. `.text` (§4.1.3) is `SHT_PROGBITS` with
/// `SHF_ALLOC | SHF_EXECINSTR`, loaded by the only `PT_LOAD` (vaddr 0 = instruction slot 0,
/// flags R+X). The notes (§4.1.4) sit in one `SHT_NOTE` section `.note` covered by one
/// `PT_NOTE` (`p_memsz` = `p_filesz`, as usual for note segments); they are not loaded into
/// DPP memory (no `SHF_ALLOC`).
pub fn write_executable(
    words: &[Words],
    info: &ProgramInfo,
    out: &mut [u8],
) -> Result<usize, ElfError> {
    let n = words.len();
    if n == 0 {
        return Err(ElfError::Empty);
    }
    if n > MAX_INSTRUCTIONS {
        return Err(ElfError::TooLong(n));
    }
    let needed = executable_len(n, info);
    if out.len() < needed {
        return Err(ElfError::BufferTooSmall { needed });
    }
    let text_len = n * WORDS_PER_INST * 4;
    let note_off = TEXT_OFF + text_len;
    let note_len = notes_len(info);
    let shstr_off = note_off + note_len;
    let sh_off = shstr_off + SHSTRTAB_PADDED;
    let mut o = Out { buf: out, pos: 0 };
    // e_ident
    o.u8s(&[0x7f, b'E', b'L', b'F', 1, 1, 1, ELFOSABI_ATI, 1, 0, 0, 0, 0, 0, 0, 0]);
    o.u16(2); // e_type = ET_EXEC
    o.u16(EM_ATI_R5XX);
    o.u32(1); // e_version = EV_CURRENT
    o.u32(0); // e_entry
    o.u32(EHDR as u32); // e_phoff
    o.u32(sh_off as u32); // e_shoff
    o.u32(EF_ATI_DPP);
    o.u16(EHDR as u16);
    o.u16(PHDR as u16);
    o.u16(2); // e_phnum
    o.u16(SHDR as u16);
    o.u16(4); // e_shnum
    o.u16(3); // e_shstrndx
    // PT_LOAD: .text
    for v in [1, TEXT_OFF as u32, 0, 0, text_len as u32, text_len as u32, 5, 4] {
        o.u32(v);
    }
    // PT_NOTE: all notes
    for v in [4, note_off as u32, 0, 0, note_len as u32, note_len as u32, 4, 4] {
        o.u32(v);
    }
    for w in words {
        for &x in w {
            o.u32(x);
        }
    }
    // Notes, in the order of the guide's table.
    o.note_header(PROGINFO_WORDS * 4, note_type::PROGINFO);
    for w in proginfo(n, info) {
        o.u32(w);
    }
    o.index_list(note_type::INPUTS, &[info.inputs.into()]);
    o.index_list(note_type::OUTPUTS, &[info.outputs.into()]);
    o.note_header(4, note_type::CONDOUT);
    o.u32(info.cond_out as u32);
    o.index_list(note_type::FLOAT32CONSTS, &info.float_consts);
    o.index_list(note_type::INT32CONSTS, &[info.int_consts.into()]);
    o.note_header(4, note_type::EARLYEXIT);
    o.u32(info.early_exit as u32);
    debug_assert_eq!(o.pos, shstr_off);
    o.u8s(SHSTRTAB);
    o.u8s(&[0; 4][..SHSTRTAB_PADDED - SHSTRTAB.len()]);
    // Section headers: name, type, flags, addr, offset, size, link, info, addralign, entsize.
    o.u8s(&[0; SHDR]);
    for v in [1, 1, 6, 0, TEXT_OFF as u32, text_len as u32, 0, 0, 4, 0] {
        o.u32(v);
    }
    for v in [7, 7, 0, 0, note_off as u32, note_len as u32, 0, 0, 4, 0] {
        o.u32(v);
    }
    for v in [13, 3, 0, 0, shstr_off as u32, SHSTRTAB.len() as u32, 0, 0, 1, 0] {
        o.u32(v);
    }
    debug_assert_eq!(o.pos, needed);
    Ok(needed)
}
