//! The falcon core: fetch through the code TLB (§2.10.7), decode with this module's own
//! reading of the §2.10.2 formats, execute with the §2.10.3-§2.10.9 pseudocode.
//!
//! Formats (§2.10.2): byte 0's high 2 bits are the operand size (00 b8, 01 b16, 10 b32, 11
//! unsized); R1 is byte 1's low nibble, R2 its high nibble, R3 byte 2's high nibble; O1 is
//! byte 0's low nibble, O2 byte 1's, OL byte 1's low 6 bits, O3 byte 2's low nibble; I8 is
//! byte 2, I16 bytes 2-3 little-endian.

use super::{Falcon, State, XferKind, flag, sr, trap};

/// What an instruction did to the flow of execution.
pub(super) enum Flow {
    /// Executed (or trapped, or stopped): count it.
    Next,
    /// Could not run now (an xfer queue full, an xfer wait, a code page still uploading):
    /// `$pc` unchanged, retry next tick.
    Stall,
}

/// Why a code fetch did not return a byte.
enum Fetch {
    Trap(u32),
    Busy,
    /// A secret page: authenticated mode is not emulated (the engines are not secretful).
    Secret,
}

/// Instruction length from byte 0 (§2.10.2 format lists), `None` for an opcode no format has.
fn length(op: u8) -> Option<u32> {
    if op < 0xc0 {
        return match op & 0x3f {
            0x00..=0x1f | 0x30 | 0x34 | 0x36 | 0x38..=0x3c => Some(3),
            0x20..=0x2f | 0x31 | 0x37 => Some(4),
            0x3d => Some(2),
            _ => None,
        };
    }
    match op {
        0xc0..=0xdf | 0xf0 | 0xf2 | 0xf4 | 0xfa | 0xfd..=0xff => Some(3),
        0xe0..=0xef | 0xf1 | 0xf5 => Some(4),
        0xf8 | 0xf9 | 0xfc => Some(2),
        _ => None,
    }
}

fn mask(sz: u32) -> u32 {
    if sz == 32 { u32::MAX } else { (1 << sz) - 1 }
}

/// S(x): the sign bit at the operation's size.
fn sign(x: u32, sz: u32) -> bool {
    x >> (sz - 1) & 1 != 0
}

/// C(a, b, c) of §2.10.3: the carry out of an addition with input high bits a, b and result
/// high bit c.
fn carry(a: bool, b: bool, c: bool) -> bool {
    (a && b) || ((a || b) && !c)
}

/// O(a, b, c) of §2.10.3: signed overflow of an addition.
fn overflow(a: bool, b: bool, c: bool) -> bool {
    a == b && a != c
}

fn sext8(v: u32) -> u32 {
    v as u8 as i8 as i32 as u32
}

fn sext16(v: u32) -> u32 {
    v as u16 as i16 as i32 as u32
}

/// Decoded operand fields of one instruction.
#[derive(Clone, Copy)]
struct Insn {
    op: u8,
    len: u32,
    b1: u8,
    b2: u8,
    i16: u32,
}

impl Insn {
    fn r1(&self) -> usize {
        usize::from(self.b1 & 0xf)
    }
    fn r2(&self) -> usize {
        usize::from(self.b1 >> 4)
    }
    fn r3(&self) -> usize {
        usize::from(self.b2 >> 4)
    }
    fn o1(&self) -> u8 {
        self.op & 0xf
    }
    fn o2(&self) -> u8 {
        self.b1 & 0xf
    }
    fn ol(&self) -> u8 {
        self.b1 & 0x3f
    }
    fn o3(&self) -> u8 {
        self.b2 & 0xf
    }
    fn i8(&self) -> u32 {
        u32::from(self.b2)
    }
    /// Sized immediate: I8 or I16 (zero-extended).
    fn imm(&self) -> u32 {
        if self.len == 4 { self.i16 } else { self.i8() }
    }
    /// Sign-extended immediate.
    fn simm(&self) -> u32 {
        if self.len == 4 { sext16(self.i16) } else { sext8(self.i8()) }
    }
}

impl Falcon {
    fn fetch(&self, address: u32) -> Result<u8, Fetch> {
        let res = self.vtlb(address);
        if res >> 31 != 0 {
            return Err(Fetch::Trap(trap::VM_NO_HIT));
        }
        if res >> 30 & 1 != 0 {
            return Err(Fetch::Trap(trap::VM_MULTI_HIT));
        }
        let flags = res >> 24 & 7;
        if flags & super::TLB_USABLE == 0 {
            return Err(if flags & super::TLB_BUSY != 0 { Fetch::Busy } else { Fetch::Secret });
        }
        let phys = (res & 0xff) as usize;
        Ok(self.imem[phys << 8 | (address & 0xff) as usize])
    }

    /// Execute the instruction at `$pc`.
    pub(super) fn execute(&mut self, time: u64) -> Flow {
        let pc = self.sr[sr::PC];
        let mut bytes = [0u8; 4];
        let mut len = 1;
        let mut i = 0;
        while i < len {
            match self.fetch(pc.wrapping_add(i) & 0xffff) {
                Ok(b) => bytes[i as usize] = b,
                Err(Fetch::Busy) => return Flow::Stall,
                Err(Fetch::Trap(reason)) => {
                    self.trap(reason);
                    return Flow::Next;
                }
                Err(Fetch::Secret) => {
                    self.halt();
                    return Flow::Next;
                }
            }
            if i == 0 {
                match length(bytes[0]) {
                    Some(l) => len = l,
                    None => {
                        self.trap(trap::INVALID_OPCODE);
                        return Flow::Next;
                    }
                }
            }
            i += 1;
        }
        let insn = Insn {
            op: bytes[0],
            len,
            b1: bytes[1],
            b2: bytes[2],
            i16: u32::from(u16::from_le_bytes([bytes[2], bytes[3]])),
        };
        let next = pc.wrapping_add(len) & 0xffff;
        let result = if insn.op < 0xc0 {
            self.sized_op(insn, 8 << (insn.op >> 6)).map(|()| Some(next))
        } else {
            self.unsized_op(insn, pc, next, time)
        };
        match result {
            Ok(Some(target)) => {
                self.sr[sr::PC] = target & 0xffff;
                Flow::Next
            }
            Ok(None) => Flow::Stall,
            Err(Invalid) => {
                // §2.10.2 "Invalid opcode handling": $pc unmodified, trap reason 8.
                self.trap(trap::INVALID_OPCODE);
                Flow::Next
            }
        }
    }

    fn set_sized(&mut self, reg: usize, value: u32, sz: u32) {
        let m = mask(sz);
        self.gpr[reg] = (self.gpr[reg] & !m) | (value & m);
    }

    fn set_sz_flags(&mut self, res: u32, sz: u32) {
        self.set_flag(flag::S, sign(res, sz));
        self.set_flag(flag::Z, res & mask(sz) == 0);
    }

    /// add/adc/sub/sbb (§2.10.3), flags written.
    fn arith(&mut self, sub: u8, a: u32, b: u32, sz: u32) -> u32 {
        let m = mask(sz);
        let (a, b) = (a & m, b & m);
        let c = u32::from(self.flag(flag::C));
        let res = match sub {
            0 => a.wrapping_add(b),
            1 => a.wrapping_add(b).wrapping_add(c),
            2 => a.wrapping_sub(b),
            _ => a.wrapping_sub(b).wrapping_sub(c),
        } & m;
        let (sa, sb, sr) = (sign(a, sz), sign(b, sz), sign(res, sz));
        if sub < 2 {
            self.set_flag(flag::C, carry(sa, sb, sr));
            self.set_flag(flag::O, overflow(sa, sb, sr));
        } else {
            self.set_flag(flag::C, !carry(sa, !sb, sr));
            self.set_flag(flag::O, overflow(sa, !sb, sr));
        }
        self.set_sz_flags(res, sz);
        res
    }

    /// cmpu/cmps/cmp (§2.10.3).
    fn compare(&mut self, sub: u8, a: u32, b: u32, sz: u32) {
        let m = mask(sz);
        let (a, b) = (a & m, b & m);
        let diff = a.wrapping_sub(b) & m;
        let (sa, sb, sd) = (sign(a, sz), sign(b, sz), sign(diff, sz));
        self.set_flag(flag::Z, diff == 0);
        match sub {
            4 => self.set_flag(flag::C, !carry(sa, !sb, sd)),
            5 => self.set_flag(flag::C, overflow(sa, !sb, sd) ^ sd),
            _ => {
                self.set_flag(flag::C, !carry(sa, !sb, sd));
                self.set_flag(flag::O, overflow(sa, !sb, sd));
                self.set_flag(flag::S, sd);
            }
        }
    }

    /// shl/shr/sar/shlc/shrc (§2.10.3; v3 flags).
    fn shift(&mut self, sub: u8, a: u32, b: u32, sz: u32) -> u32 {
        let m = u64::from(mask(sz));
        let a = u64::from(a) & m;
        let n = b & (sz - 1);
        let c = u64::from(self.flag(flag::C));
        let (res, carry_out) = match sub {
            4 | 0xc => {
                let mut r = a << n;
                if sub == 0xc && n != 0 {
                    r |= c << (n - 1);
                }
                (r, n != 0 && (a >> (sz - n)) & 1 != 0)
            }
            _ => {
                let mut r = a >> n;
                if sub == 0xd && n != 0 {
                    r |= c << (sz - n);
                }
                if sub == 7 && sign(a as u32, sz) {
                    r |= (u64::MAX << (sz - n)) & m;
                }
                (r, n != 0 && (a >> (n - 1)) & 1 != 0)
            }
        };
        let res = (res & m) as u32;
        self.set_flag(flag::C, carry_out);
        self.set_flag(flag::O, false);
        self.set_sz_flags(res, sz);
        res
    }

    /// The binary operation `sub` of the 1x/2x/36/37/3b/3c forms: arithmetic or shift.
    fn alu(&mut self, sub: u8, a: u32, b: u32, sz: u32) -> Result<u32, Invalid> {
        match sub {
            0..=3 => Ok(self.arith(sub, a, b, sz)),
            // §2.10.2's subopcode table gives sar 7 (the §2.10.3 form table's 6 is cmp's).
            4 | 5 | 7 | 0xc | 0xd => Ok(self.shift(sub, a, b, sz)),
            _ => Err(Invalid),
        }
    }

    /// not/neg/mov/hswap (§2.10.3), on `sz` bits.
    fn unary(&mut self, sub: u8, src: u32, sz: u32) -> Result<u32, Invalid> {
        let m = mask(sz);
        let src = src & m;
        let res = match sub {
            0 => !src & m,
            1 => src.wrapping_neg() & m,
            2 => return Ok(src),
            3 => (src >> (sz / 2) | src << (sz / 2)) & m,
            _ => return Err(Invalid),
        };
        let o = sub == 1 && res == 1 << (sz - 1);
        self.set_flag(flag::O, o);
        self.set_sz_flags(res, sz);
        Ok(res)
    }

    /// Sized instructions (§2.10.2 "Sized").
    fn sized_op(&mut self, insn: Insn, sz: u32) -> Result<(), Invalid> {
        let r = self.gpr;
        let scale = sz / 8;
        let sp = self.sr[sr::SP];
        match insn.op & 0x3f {
            // st b(sz) D[R2 + I8 * scale] = R1
            0x00..=0x0f if insn.o1() == 0 => {
                let address = r[insn.r2()].wrapping_add(insn.i8() * scale);
                self.st(sz, address, r[insn.r1()]);
            }
            // ld R1 = D[R2 + I8 * scale]; R1 = R2 op I8
            0x10..=0x1f => {
                let v = if insn.o1() == 8 {
                    self.ld(sz, r[insn.r2()].wrapping_add(insn.i8() * scale))
                } else {
                    self.alu(insn.o1(), r[insn.r2()], insn.i8(), sz)?
                };
                self.set_sized(insn.r1(), v, sz);
            }
            0x20..=0x2f if insn.o1() <= 3 => {
                let v = self.arith(insn.o1(), r[insn.r2()], insn.i16, sz);
                self.set_sized(insn.r1(), v, sz);
            }
            0x30 if insn.o2() == 1 => self.st(sz, sp.wrapping_add(insn.i8() * scale), r[insn.r2()]),
            0x30 | 0x31 if matches!(insn.o2(), 4..=6) => {
                let b = if insn.o2() == 4 { insn.imm() } else { insn.simm() };
                self.compare(insn.o2(), r[insn.r2()], b, sz);
            }
            0x34 if insn.o2() == 0 => {
                let v = self.ld(sz, sp.wrapping_add(insn.i8() * scale));
                self.set_sized(insn.r2(), v, sz);
            }
            0x36 => {
                let v = self.alu(insn.o2(), r[insn.r2()], insn.i8(), sz)?;
                self.set_sized(insn.r2(), v, sz);
            }
            0x37 if insn.o2() <= 3 => {
                let v = self.arith(insn.o2(), r[insn.r2()], insn.i16, sz);
                self.set_sized(insn.r2(), v, sz);
            }
            0x38 => match insn.o3() {
                0 => self.st(sz, r[insn.r2()], r[insn.r1()]),
                1 => self.st(sz, sp.wrapping_add(r[insn.r1()].wrapping_mul(scale)), r[insn.r2()]),
                4..=6 => self.compare(insn.o3(), r[insn.r2()], r[insn.r1()], sz),
                _ => return Err(Invalid),
            },
            0x39 => {
                let v = self.unary(insn.o3(), r[insn.r2()], sz)?;
                self.set_sized(insn.r1(), v, sz);
            }
            0x3a if insn.o3() == 0 => {
                let v = self.ld(sz, sp.wrapping_add(r[insn.r1()].wrapping_mul(scale)));
                self.set_sized(insn.r2(), v, sz);
            }
            0x3b => {
                let v = self.alu(insn.o3(), r[insn.r2()], r[insn.r1()], sz)?;
                self.set_sized(insn.r2(), v, sz);
            }
            0x3c => {
                let v = if insn.o3() == 8 {
                    self.ld(sz, r[insn.r2()].wrapping_add(r[insn.r1()].wrapping_mul(scale)))
                } else {
                    self.alu(insn.o3(), r[insn.r2()], r[insn.r1()], sz)?
                };
                self.set_sized(insn.r3(), v, sz);
            }
            0x3d => match insn.o2() {
                0..=3 => {
                    let v = self.unary(insn.o2(), r[insn.r2()], sz)?;
                    self.set_sized(insn.r2(), v, sz);
                }
                4 => self.set_sized(insn.r2(), 0, sz),
                5 => {
                    self.set_flag(flag::O, false);
                    self.set_sz_flags(r[insn.r2()] & mask(sz), sz);
                }
                _ => return Err(Invalid),
            },
            _ => return Err(Invalid),
        }
        Ok(())
    }

    /// The unsized three-operand operations shared by the cx/ex/f0/f1/fd/ff forms.
    fn binary(&mut self, sub: u8, a: u32, b: u32, dst_old: u32) -> Result<u32, Invalid> {
        let res = match sub {
            0 => (a & 0xffff).wrapping_mul(b & 0xffff),
            1 => sext16(a).wrapping_mul(sext16(b)),
            2 => {
                let bit = b & 0x1f;
                let high = u32::MAX << bit;
                let v = if a >> bit & 1 != 0 { a | high } else { a & !high };
                self.set_sz_flags(v, 32);
                v
            }
            3 | 7 => {
                let low = b & 0x1f;
                let sizem1 = b >> 5 & 0x1f;
                let field = ((2u64 << sizem1) - 1) as u32;
                let mut bf = (a >> low) & field;
                let fill = sub == 3 && a >> ((low + sizem1) & 0x1f) & 1 != 0;
                if fill {
                    bf |= !field;
                }
                self.set_flag(flag::S, fill);
                self.set_flag(flag::Z, bf == 0);
                bf
            }
            4..=6 => {
                let v = match sub {
                    4 => a & b,
                    5 => a | b,
                    _ => a ^ b,
                };
                // §2.10.3: "On Falcon v3, sets all flags"; c and o read as cleared (the text's
                // "set to s" is taken as conversion damage of 0: a logic op has no carry).
                self.set_flag(flag::C, false);
                self.set_flag(flag::O, false);
                self.set_sz_flags(v, 32);
                v
            }
            8 => {
                let v = a >> (b & 0x1f) & 1;
                self.set_flag(flag::S, false);
                self.set_flag(flag::Z, v == 0);
                v
            }
            0xb => {
                let low = b & 0x1f;
                let size = (b >> 5 & 0x1f) + 1;
                if low + size <= 32 {
                    let field = (((1u64 << size) - 1) as u32) << low;
                    (dst_old & !field) | ((a << low) & field)
                } else {
                    dst_old
                }
            }
            0xc | 0xd => {
                let q = a.checked_div(b).unwrap_or(u32::MAX);
                if sub == 0xc { q } else { a.wrapping_sub(q.wrapping_mul(b)) }
            }
            _ => return Err(Invalid),
        };
        Ok(res)
    }

    /// Bit `bit` of `$flags` for a `bra` condition code (§2.10.5).
    fn condition(&self, cc: u8) -> Result<bool, Invalid> {
        let (c, o, s, z) =
            (self.flag(flag::C), self.flag(flag::O), self.flag(flag::S), self.flag(flag::Z));
        Ok(match cc {
            0x00..=0x07 => self.flag(u32::from(cc)),
            0x08 => c,
            0x09 => o,
            0x0a => s,
            0x0b => z,
            0x0c => !c && !z,
            0x0d => c || z,
            0x0e => true,
            0x10..=0x17 => !self.flag(u32::from(cc - 0x10)),
            0x18 => !c,
            0x19 => !o,
            0x1a => !s,
            0x1b => !z,
            0x1c => !(o ^ s) && !z,
            0x1d => (o ^ s) || z,
            0x1e => o ^ s,
            0x1f => !(o ^ s),
            _ => return Err(Invalid),
        })
    }

    /// The host window offset a falcon IO address reaches (§2.10.10: host offset X is IO
    /// address X << 6; bits 2-7, the index, are ignored: GT215's falcons have no indexed
    /// registers this model emulates). Host-only offsets are not in the IO space.
    fn io_offset(address: u32) -> Option<u32> {
        let offset = (address >> 6) & 0xffc;
        (address < 0x40000 && offset < super::HOST_ONLY).then_some(offset)
    }

    fn iord(&mut self, address: u32, time: u64) -> u32 {
        Self::io_offset(address).map_or(0, |o| self.host_read(o, time))
    }

    fn iowr(&mut self, address: u32, value: u32) {
        if let Some(o) = Self::io_offset(address) {
            self.host_write(o, value);
        }
    }

    /// xcld/xdld/xdst (§2.10.9): `None` (stall) while the queue is full.
    fn xfer_insn(&mut self, kind: XferKind, offset: u32, local: u32) -> Option<()> {
        if self.xfers.len() >= self.engine.xfer_slots() {
            return None;
        }
        let base =
            if kind == XferKind::CodeLoad { self.sr[sr::XCBASE] } else { self.sr[sr::XDBASE] };
        let size = local >> 16 & 7;
        let x = Falcon::request(kind, base, offset, local, size);
        self.queue(x);
        Some(())
    }

    /// Write special register `n` (`mov $sN, $rX`): `$pc` is read-only (§2.10.5), `$sp` keeps
    /// its forced-zero bits.
    fn write_sr(&mut self, n: usize, value: u32) {
        match n {
            sr::PC => {}
            sr::SP => self.set_sp(value),
            _ => self.sr[n] = value,
        }
    }

    /// Unsized instructions (§2.10.2 "Unsized"); `Ok(Some(next pc))`, `Ok(None)` to stall.
    fn unsized_op(
        &mut self,
        insn: Insn,
        pc: u32,
        next: u32,
        time: u64,
    ) -> Result<Option<u32>, Invalid> {
        let r = self.gpr;
        match insn.op {
            0xc0..=0xcf | 0xe0..=0xef => {
                let sub = insn.o1();
                let v = if sub == 0xf && insn.op < 0xd0 {
                    self.iord(r[insn.r2()].wrapping_add(insn.i8() * 4), time)
                } else if insn.op >= 0xe0 && matches!(sub, 2 | 8 | 0xf) {
                    return Err(Invalid);
                } else {
                    let b = if sub == 1 { insn.simm() } else { insn.imm() };
                    self.binary(sub, r[insn.r2()], b, r[insn.r1()])?
                };
                self.gpr[insn.r1()] = v;
            }
            0xd0..=0xdf => match insn.o1() {
                0 | 1 => self.iowr(r[insn.r2()].wrapping_add(insn.i8() * 4), r[insn.r1()]),
                _ => return Err(Invalid),
            },
            0xf0 | 0xf1 => {
                let reg = insn.r2();
                match insn.o2() {
                    3 => self.gpr[reg] = (r[reg] & 0xffff) | insn.imm() << 16,
                    7 => self.gpr[reg] = insn.simm(),
                    9..=0xb if insn.op == 0xf0 => {
                        self.gpr[reg] = bit_op(insn.o2(), r[reg], insn.i8())
                    }
                    0xc if insn.op == 0xf0 => {
                        let v = self.sr[sr::FLAGS] >> (insn.i8() & 0x1f) & 1;
                        self.set_flag(flag::S, false);
                        self.set_flag(flag::Z, v == 0);
                        self.gpr[reg] = v;
                    }
                    sub @ (0 | 1 | 2 | 4 | 5 | 6) if !(sub == 2 && insn.op == 0xf1) => {
                        let b = if sub == 1 { insn.simm() } else { insn.imm() };
                        self.gpr[reg] = self.binary(sub, r[reg], b, r[reg])?;
                    }
                    _ => return Err(Invalid),
                }
            }
            0xf2 => match insn.o2() {
                8 => {
                    let bit = insn.i8() & 0x1f;
                    self.set_flag(bit, r[insn.r2()] & 1 != 0);
                }
                _ => return Err(Invalid),
            },
            0xf4 | 0xf5 => {
                let sub = insn.ol();
                match sub {
                    0x00..=0x1f => {
                        if self.condition(sub)? {
                            return Ok(Some(pc.wrapping_add(insn.simm())));
                        }
                    }
                    0x20 => return Ok(Some(insn.imm())),
                    0x21 => {
                        self.push(next);
                        return Ok(Some(insn.imm()));
                    }
                    0x28 if insn.op == 0xf4 => {
                        if self.flag(insn.i8() & 0x1f) {
                            // "return pointer will point to start of the sleep instruction"
                            self.state = State::Sleeping;
                            return Ok(Some(pc));
                        }
                    }
                    0x30 => self.set_sp(self.sr[sr::SP].wrapping_add(insn.simm())),
                    0x31..=0x33 if insn.op == 0xf4 => {
                        let flags = bit_op(sub - 0x28, self.sr[sr::FLAGS], insn.i8());
                        self.sr[sr::FLAGS] = flags;
                    }
                    _ => return Err(Invalid),
                }
            }
            0xf8 => match insn.o2() {
                0 => return Ok(Some(self.pop())),
                1 => {
                    let target = self.pop();
                    for x in 0..2 {
                        let is = self.flag(flag::IS0 + x);
                        self.set_flag(flag::IE0 + x, is);
                    }
                    // A returning handler ends the trap (the document leaves ta's clearing
                    // unsaid; a decision, so a handled trap can trap again).
                    self.set_flag(flag::TA, false);
                    return Ok(Some(target));
                }
                2 => {
                    self.halt();
                    return Ok(Some(next));
                }
                3 => {
                    if self.xfers.iter().any(|x| x.kind != XferKind::CodeLoad) {
                        return Ok(None);
                    }
                }
                7 => {
                    if self.xfers.iter().any(|x| x.kind == XferKind::CodeLoad) {
                        return Ok(None);
                    }
                }
                sub @ 8..=0xb => {
                    self.sr[sr::PC] = next;
                    self.trap(trap::SOFTWARE + u32::from(sub - 8));
                    return Ok(Some(self.sr[sr::PC]));
                }
                _ => return Err(Invalid),
            },
            0xf9 => {
                let v = r[insn.r2()];
                match insn.o2() {
                    0 => self.push(v),
                    1 => self.set_sp(self.sr[sr::SP].wrapping_add(v)),
                    4 => return Ok(Some(v)),
                    5 => {
                        self.push(next);
                        return Ok(Some(v));
                    }
                    8 => self.itlb(v & 0xff_ffff),
                    9..=0xb => self.sr[sr::FLAGS] = bit_op(insn.o2(), self.sr[sr::FLAGS], v),
                    _ => return Err(Invalid),
                }
            }
            0xfa => {
                let (a, b) = (r[insn.r2()], r[insn.r1()]);
                match insn.o3() {
                    0 | 1 => self.iowr(a, b),
                    4..=6 => {
                        let kind = match insn.o3() {
                            4 => XferKind::CodeLoad,
                            5 => XferKind::DataLoad,
                            _ => XferKind::DataStore,
                        };
                        if self.xfer_insn(kind, a, b).is_none() {
                            return Ok(None);
                        }
                    }
                    8 => self.set_flag(b & 0x1f, a & 1 != 0),
                    _ => return Err(Invalid),
                }
            }
            // pop: the only O2 R2D format is fc (the §2.10.4 form table's f2 is a source
            // format, taken by setp).
            0xfc if insn.o2() == 0 => self.gpr[insn.r2()] = self.pop(),
            0xfd => {
                let reg = insn.r2();
                let b = r[insn.r1()];
                self.gpr[reg] = match insn.o3() {
                    9..=0xb => bit_op(insn.o3(), r[reg], b),
                    sub @ (0 | 1 | 2 | 4 | 5 | 6) => self.binary(sub, r[reg], b, r[reg])?,
                    _ => return Err(Invalid),
                };
            }
            0xfe => {
                let (d, s) = (insn.r1(), insn.r2());
                match insn.o3() {
                    // mov $sD, $rS / mov $rD, $sS (envytools envydis fe/0, fe/1)
                    0 => self.write_sr(d, r[s]),
                    1 => self.gpr[d] = self.sr[s],
                    2 => self.gpr[d] = self.ptlb(r[s] & 0xff_ffff),
                    3 => self.gpr[d] = self.vtlb(r[s] & 0xff_ffff),
                    0xc => {
                        let v = self.sr[sr::FLAGS] >> (r[s] & 0x1f) & 1;
                        self.set_flag(flag::S, false);
                        self.set_flag(flag::Z, v == 0);
                        self.gpr[d] = v;
                    }
                    _ => return Err(Invalid),
                }
            }
            0xff => {
                let sub = insn.o3();
                let v = if sub == 0xf {
                    self.iord(r[insn.r2()].wrapping_add(r[insn.r1()].wrapping_mul(4)), time)
                } else if sub == 0xb {
                    return Err(Invalid);
                } else {
                    self.binary(sub, r[insn.r2()], r[insn.r1()], r[insn.r3()])?
                };
                self.gpr[insn.r3()] = v;
            }
            _ => return Err(Invalid),
        }
        Ok(Some(next))
    }
}

/// bset (9), bclr (0xa), btgl (0xb) of bit `bit & 0x1f` (§2.10.3).
fn bit_op(sub: u8, value: u32, bit: u32) -> u32 {
    let b = 1 << (bit & 0x1f);
    match sub {
        9 => value | b,
        0xa => value & !b,
        _ => value ^ b,
    }
}

/// An opcode or subopcode the v3 falcon does not have.
struct Invalid;
