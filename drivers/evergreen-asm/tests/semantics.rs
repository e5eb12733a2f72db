//! The example kernels compute what their documentation says: each runs on a small reference
//! interpreter (test-only; the emulated device has its own decoder and executor) and is
//! compared element by element with the CPU, on both chips.
//!
//! The interpreter executes the subset the examples use, one wave per thread group, with
//! this reading of the flow-control instructions (R600-family ISA as Mesa and LLVM use it):
//! `ALU_PUSH_BEFORE`/`PUSH` push the active mask; `PRED_SET*` with `UPDATE_EXEC_MASK` keeps
//! the active threads whose comparison holds; `JUMP` jumps when no thread is active, popping
//! `POP_COUNT` entries; `ELSE` activates the threads of the stack top that are inactive (and
//! deactivates the active ones), jumping with its pops when none is left; `POP` restores the
//! mask `POP_COUNT` entries down; a loop keeps the mask it was entered with and the threads
//! that broke out of it, which stay inactive until `LOOP_END` lets the loop finish.

mod common;

use baregpu_evergreen_asm::alu::Sel;
use baregpu_evergreen_asm::*;
use common::asm;
use proptest::prelude::*;

const WAVE: usize = 64;

struct Machine<'a> {
    chip: Chip,
    words: &'a [u32],
    cb0: &'a [u32],
    mem: &'a mut [u32],
}

struct Loop {
    entry: u64,
    broken: u64,
}

impl Machine<'_> {
    /// Runs one group of `threads` threads with group id `group`.
    fn run_group(&mut self, group: u32, threads: usize) {
        let mut gpr = vec![[[0u32; 4]; 128]; WAVE];
        for (t, r) in gpr.iter_mut().enumerate().take(threads) {
            r[0][0] = t as u32;
            r[1][0] = group;
        }
        let mut active: u64 = if threads == 64 { !0 } else { (1 << threads) - 1 };
        let mut stack: Vec<u64> = Vec::new();
        let mut loops: Vec<Loop> = Vec::new();
        let mut pc = 0usize;
        let mut budget = 10_000;
        let restore = |stack: &mut Vec<u64>, loops: &[Loop], n: u8| -> u64 {
            let mut m = 0;
            for _ in 0..n {
                m = stack.pop().expect("stack underflow");
            }
            m & !loops.last().map_or(0, |l| l.broken)
        };
        loop {
            budget -= 1;
            assert!(budget > 0, "runaway program");
            let inst =
                CfInstruction::decode([self.words[2 * pc], self.words[2 * pc + 1]], self.chip)
                    .unwrap();
            let mut next = pc + 1;
            match inst {
                CfInstruction::Alu(a) => {
                    if a.inst == AluCfInst::AluPushBefore {
                        stack.push(active);
                    }
                    self.alu_clause(&a, &mut gpr, &mut active);
                    match a.inst {
                        AluCfInst::AluPopAfter => active = restore(&mut stack, &loops, 1),
                        AluCfInst::AluPop2After => active = restore(&mut stack, &loops, 2),
                        _ => {}
                    }
                }
                CfInstruction::Rat(r) => self.rat(&r, &gpr, active),
                CfInstruction::Cf(c) => match c.inst {
                    CfInst::Tc | CfInst::Vc => self.fetch_clause(&c, &mut gpr, active),
                    CfInst::Nop | CfInst::CfEnd => {}
                    CfInst::Jump if active == 0 => {
                        if c.pop_count > 0 {
                            active = restore(&mut stack, &loops, c.pop_count);
                        }
                        next = c.addr as usize;
                    }
                    CfInst::Jump => {}
                    CfInst::Push => {
                        stack.push(active);
                        if active == 0 {
                            next = c.addr as usize;
                        }
                    }
                    CfInst::Else => {
                        let top = *stack.last().expect("ELSE without PUSH");
                        active = top & !active & !loops.last().map_or(0, |l| l.broken);
                        if active == 0 {
                            active = restore(&mut stack, &loops, c.pop_count);
                            next = c.addr as usize;
                        }
                    }
                    CfInst::Pop => active = restore(&mut stack, &loops, c.pop_count),
                    CfInst::LoopStartDx10 => {
                        if active == 0 {
                            next = c.addr as usize;
                        } else {
                            loops.push(Loop { entry: active, broken: 0 });
                        }
                    }
                    CfInst::LoopBreak => {
                        let l = loops.last_mut().expect("break outside a loop");
                        l.broken |= active;
                        active = 0;
                        if l.entry & !l.broken == 0 {
                            restore(&mut stack, &loops, c.pop_count);
                            next = c.addr as usize;
                        }
                    }
                    CfInst::LoopEnd => {
                        let l = loops.last().expect("LOOP_END outside a loop");
                        let live = l.entry & !l.broken;
                        if live != 0 {
                            active = live;
                            next = c.addr as usize;
                        } else {
                            active = l.entry;
                            loops.pop();
                        }
                    }
                },
            }
            if inst.ends_program(self.chip) {
                return;
            }
            pc = next;
        }
    }

    fn alu_clause(&self, a: &CfAluWord, gpr: &mut [[[u32; 4]; 128]], active: &mut u64) {
        let base = a.addr as usize * 2;
        let end = base + 2 * (usize::from(a.count) + 1);
        for common::Group { insts: group, literals } in
            common::split_alu_clause(&self.words[base..end], self.chip)
        {
            // Every instruction reads the registers as they were before the group.
            let before = gpr.to_vec();
            let mut exec = *active;
            for w in &group {
                for t in 0..WAVE {
                    if *active & (1 << t) == 0 {
                        continue;
                    }
                    let src = |k: usize| -> u32 {
                        let s = w.src[k];
                        let v = match s.sel {
                            Sel::Gpr(g) => before[t][usize::from(g)][s.chan.index()],
                            Sel::Kcache { set, index } => {
                                let kc = a.kcache[usize::from(set)];
                                assert_eq!(kc.bank, 0, "examples read cb0 only");
                                let c = usize::from(kc.addr) * 16 + usize::from(index);
                                self.cb0[c * 4 + s.chan.index()]
                            }
                            Sel::Inline(c) => c.bits(),
                            Sel::Literal => literals[s.chan.index()],
                            other => panic!("{other:?} not in the examples"),
                        };
                        if s.neg { v ^ 0x8000_0000 } else { v }
                    };
                    let f = |k| f32::from_bits(src(k));
                    let result = match w.op {
                        AluOp::Mov => src(0),
                        AluOp::Add => (f(0) + f(1)).to_bits(),
                        AluOp::MulIeee => (f(0) * f(1)).to_bits(),
                        AluOp::AddInt => src(0).wrapping_add(src(1)),
                        AluOp::AndInt => src(0) & src(1),
                        AluOp::LshlInt => src(0) << (src(1) & 31),
                        AluOp::LshrInt => src(0) >> (src(1) & 31),
                        AluOp::MulloUint => src(0).wrapping_mul(src(1)),
                        AluOp::MuladdUint24 => (src(0) & 0xFF_FFFF)
                            .wrapping_mul(src(1) & 0xFF_FFFF)
                            .wrapping_add(src(2)),
                        AluOp::PredSeteInt | AluOp::PredSetneInt => {
                            let holds = (src(0) == src(1)) == (w.op == AluOp::PredSeteInt);
                            if w.update_exec_mask && !holds {
                                exec &= !(1 << t);
                            }
                            if holds { 0x3F80_0000 } else { 0 }
                        }
                        other => panic!("{other:?} not in the examples"),
                    };
                    if w.write_mask {
                        gpr[t][usize::from(w.dst_gpr)][w.dst_chan.index()] = result;
                    }
                }
            }
            *active = exec;
        }
    }

    fn fetch_clause(&self, c: &CfWord, gpr: &mut [[[u32; 4]; 128]], active: u64) {
        for k in 0..=usize::from(c.count) {
            let at = c.addr as usize * 2 + 4 * k;
            let w = &self.words[at..at + 4];
            let f = VtxFetch::decode([w[0], w[1], w[2], w[3]], self.chip).unwrap();
            assert_eq!((f.buffer_id, f.data_format), (1, DataFormat::Fmt32));
            for (t, regs) in gpr.iter_mut().enumerate() {
                if active & (1 << t) == 0 {
                    continue;
                }
                let byte = regs[usize::from(f.src_gpr)][f.src_sel_x.index()] + u32::from(f.offset);
                assert_eq!(byte % 4, 0);
                let v = self.mem[byte as usize / 4];
                for (ch, sel) in f.dst_sel.iter().enumerate() {
                    let value = match sel {
                        DstSel::X => v,
                        DstSel::Zero => 0,
                        DstSel::One => 1,
                        DstSel::Mask => continue,
                        other => panic!("{other:?}: FMT_32 has only x"),
                    };
                    regs[usize::from(f.dst_gpr)][ch] = value;
                }
            }
        }
    }

    fn rat(&mut self, r: &RatExport, gpr: &[[[u32; 4]; 128]], active: u64) {
        assert_eq!((r.rat_id, r.comp_mask), (0, 1));
        for (t, regs) in gpr.iter().enumerate() {
            if active & (1 << t) == 0 {
                continue;
            }
            let index = regs[usize::from(r.index_gpr)][0] as usize;
            let v = regs[usize::from(r.rw_gpr)][0];
            match r.rat_inst {
                RatInst::StoreRaw | RatInst::StoreDword => self.mem[index] = v,
                RatInst::Add => self.mem[index] = self.mem[index].wrapping_add(v),
            }
        }
    }
}

/// Runs `src` over `n` elements (groups of `local` threads) with `args` after the dispatch
/// constants; global memory is `mem` (byte address = dword index * 4).
fn run(src: &str, chip: Chip, n: usize, local: usize, args: &[u32], mem: &mut [u32]) {
    assert_eq!(n % local, 0);
    let (words, info) = asm(src, chip);
    assert!(info.num_gprs <= 128);
    let groups = (n / local) as u32;
    let mut cb0 = vec![0u32; 64];
    abi::dispatch_constants([groups, 1, 1], [local as u32, 1, 1], args, &mut cb0).unwrap();
    let mut m = Machine { chip, words: &words, cb0: &cb0, mem };
    for g in 0..groups {
        m.run_group(g, local);
    }
}

/// Global memory with arrays at dword offsets 0, `n`, `2n`, … and a scalar after them.
fn layout(n: usize, arrays: usize) -> (Vec<u32>, Vec<u32>) {
    let mem = vec![0u32; n * arrays + 4];
    let addrs = (0..=arrays).map(|k| (k * n * 4) as u32).collect();
    (mem, addrs)
}

fn normal_f32() -> impl Strategy<Value = f32> {
    prop_oneof![-1.0e6f32..1.0e6, -1.0f32..1.0].prop_filter("normal", |v| v.is_normal())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn vector_add(a in prop::collection::vec(normal_f32(), 96), b in prop::collection::vec(normal_f32(), 96), chip in prop_oneof![Just(Chip::Evergreen), Just(Chip::Cayman)]) {
        let n = 96;
        let (mut mem, addr) = layout(n, 3);
        for i in 0..n {
            mem[i] = a[i].to_bits();
            mem[n + i] = b[i].to_bits();
        }
        run(examples::VECTOR_ADD, chip, n, 32, &[addr[0], addr[1], addr[2]], &mut mem);
        for i in 0..n {
            prop_assert_eq!(mem[2 * n + i], (a[i] + b[i]).to_bits(), "c[{}]", i);
        }
    }

    #[test]
    fn saxpy(a in normal_f32(), x in prop::collection::vec(normal_f32(), 128), y in prop::collection::vec(normal_f32(), 128), chip in prop_oneof![Just(Chip::Evergreen), Just(Chip::Cayman)]) {
        let n = 128;
        let (mut mem, addr) = layout(n, 2);
        for i in 0..n {
            mem[i] = x[i].to_bits();
            mem[n + i] = y[i].to_bits();
        }
        run(examples::SAXPY, chip, n, 64, &[a.to_bits(), addr[0], addr[1]], &mut mem);
        for i in 0..n {
            prop_assert_eq!(mem[n + i], (a * x[i] + y[i]).to_bits(), "y[{}]", i);
        }
    }

    #[test]
    fn reduce_add(a in prop::collection::vec(any::<u32>(), 64), start: u32, chip in prop_oneof![Just(Chip::Evergreen), Just(Chip::Cayman)]) {
        let n = 64;
        let (mut mem, addr) = layout(n, 1);
        mem[..n].copy_from_slice(&a);
        mem[n] = start;
        run(examples::REDUCE_ADD, chip, n, 16, &[addr[0], addr[1]], &mut mem);
        prop_assert_eq!(mem[n], a.iter().fold(start, |s, v| s.wrapping_add(*v)));
    }

    #[test]
    fn collatz_step(v in prop::collection::vec(any::<u32>(), 64), chip in prop_oneof![Just(Chip::Evergreen), Just(Chip::Cayman)]) {
        let n = 64;
        let (mut mem, addr) = layout(n, 2);
        mem[..n].copy_from_slice(&v);
        run(examples::COLLATZ_STEP, chip, n, 32, &[addr[0], addr[1]], &mut mem);
        for i in 0..n {
            let want = if v[i] % 2 == 1 { v[i].wrapping_mul(3).wrapping_add(1) } else { v[i] / 2 };
            prop_assert_eq!(mem[n + i], want, "out[{}] for {}", i, v[i]);
        }
    }

    #[test]
    fn bit_length(v in prop::collection::vec(prop_oneof![any::<u32>(), 0u32..300], 64), chip in prop_oneof![Just(Chip::Evergreen), Just(Chip::Cayman)]) {
        let n = 64;
        let (mut mem, addr) = layout(n, 2);
        mem[..n].copy_from_slice(&v);
        run(examples::BIT_LENGTH, chip, n, 64, &[addr[0], addr[1]], &mut mem);
        for i in 0..n {
            prop_assert_eq!(mem[n + i], 32 - v[i].leading_zeros(), "out[{}] for {}", i, v[i]);
        }
    }
}

#[test]
fn branches_where_all_or_no_threads_take_them() {
    // Uniform data takes the JUMP (no odd value) or the ELSE jump (no even value).
    for chip in Chip::ALL {
        for v in [[6u32; 16], [7u32; 16]] {
            let (mut mem, addr) = layout(16, 2);
            mem[..16].copy_from_slice(&v);
            run(examples::COLLATZ_STEP, chip, 16, 16, &[addr[0], addr[1]], &mut mem);
            let want = if v[0] == 6 { 3 } else { 22 };
            assert!(mem[16..32].iter().all(|&x| x == want), "{chip} {v:?}: {:?}", &mem[16..32]);
        }
        // All zeros: every thread breaks in the first iteration.
        let (mut mem, addr) = layout(16, 2);
        run(examples::BIT_LENGTH, chip, 16, 16, &[addr[0], addr[1]], &mut mem);
        assert!(mem[16..32].iter().all(|&x| x == 0));
    }
}
