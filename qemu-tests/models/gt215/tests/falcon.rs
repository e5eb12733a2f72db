//! The v3 falcons (nvidia-hardware-envytools §2.10) on PCOPY and PDAEMON: upload ports, code
//! TLB, the ISA run on hand-encoded programs, xfers, traps, interrupts, the instruction budget.
//!
//! Encodings are written by hand from §2.10.2's formats; each line names its form.

mod common;

use baregpu_hal::RegisterIo;
use baregpu_hal::dma::{DmaAllocator, DmaLayout};
use common::*;
use gpu_device_model::{Pacing, cp_error};
use gt215_model::falcon::trap;
use gt215_model::{Faults, YIELD_EVERY};

const ENGINES: [Engine; 2] = [Engine::Pcopy, Engine::Pdaemon];

/// SCRATCH0 + 1 -> SCRATCH1, exit.
const ECHO: &[&[u8]] = &[
    &[0xf1, 0x17, 0x00, 0x10], // f1/7 mov $r1, 0x1000 (I[] of SCRATCH0 = 0x040 << 6)
    &[0xcf, 0x10, 0x00],       // cx/f iord $r0, I[$r1 + 0]
    &[0xb6, 0x00, 0x01],       // 36/0 b32 add $r0, 1
    &[0xd0, 0x10, 0x40],       // dx/0 iowr I[$r1 + 0x40 * 4] (= SCRATCH1), $r0
    &[0xf8, 0x02],             // f8/2 exit
];

#[test]
fn caps_report_each_engines_segments_and_version_3() {
    let gpu = gpu();
    enable_all(&gpu);
    // PDAEMON (§2.5.2, v0 = GT215): code 0x4000 = 0x40 pages, data 0x3000, 4 data ports.
    let pdaemon = Falcon::new(&gpu, Engine::Pdaemon);
    assert_eq!(pdaemon.read(reg::UC_CAPS), 0x40 | 0x30 << 9);
    assert_eq!(pdaemon.read(reg::UC_CAPS2) & 0xf, 3);
    assert_eq!(pdaemon.read(reg::UC_CAPS2) >> 16 & 0xf, 8, "§2.5.2 code TLB index bits");
    let pcopy = Falcon::new(&gpu, Engine::Pcopy);
    assert_eq!(pcopy.read(reg::UC_CAPS), 0x10 | 0x8 << 9);
    pcopy.write(reg::UC_CAPS, 0);
    assert_eq!(pcopy.read(reg::UC_CAPS), 0x10 | 0x8 << 9, "read-only");
    // Stopped after reset (§2.10.6).
    assert_eq!(pdaemon.read(reg::UC_CTRL), HALTED);
}

#[test]
fn mailbox_echo_runs_on_both_falcons_and_exit_raises_the_exit_interrupt() {
    for engine in ENGINES {
        let gpu = gpu();
        enable_all(&gpu);
        let falcon = Falcon::new(&gpu, engine);
        falcon.write(reg::SCRATCH0, 41);
        falcon.run(&program(ECHO));
        assert_eq!(falcon.read(reg::SCRATCH1), 42, "{engine:?}");
        // §2.10.6: stopping raises line 4, EXIT.
        assert_eq!(falcon.read(reg::INTR) & 1 << 4, 1 << 4);
        assert_eq!(gpu.model().falcon(engine).executed(), 5);
        // Start again: UC_ENTRY is where it starts.
        falcon.write(reg::SCRATCH0, 99);
        falcon.start(0);
        assert!(falcon.wait_halted(1000));
        assert_eq!(falcon.read(reg::SCRATCH1), 100);
    }
}

#[test]
fn code_upload_auto_increments_and_code_virt_tags_read_back_through_the_tlb() {
    let gpu = gpu();
    let falcon = Falcon::new(&gpu, Engine::Pdaemon);
    let code: Vec<u8> = (0..0x200u32).map(|i| (i * 7) as u8).collect();
    falcon.upload_code(2, 7, &code);
    // Write auto-increment left CODE_INDEX at the end of page 3.
    assert_eq!(falcon.read(reg::CODE_INDEX) & 0xfffc, 0x400);
    falcon.write(reg::CODE_INDEX, 0x200 | READ_AUTOINC);
    let back: Vec<u8> = (0..0x80).flat_map(|_| falcon.read(reg::CODE).to_le_bytes()).collect();
    assert_eq!(back, code);
    // §2.10.7 PTLB: virtual page in bits 8-23, flags (1 = usable) in 24-26.
    falcon.write(reg::TLB_CMD, 2 << 24 | 2);
    assert_eq!(falcon.read(reg::TLB_CMD_RES), 1 << 24 | 7 << 8);
    // VTLB of an address in virtual page 8: physical page 3.
    falcon.write(reg::TLB_CMD, 3 << 24 | 0x8f0);
    assert_eq!(falcon.read(reg::TLB_CMD_RES), 1 << 24 | 3);
    // No hit: bit 31.
    falcon.write(reg::TLB_CMD, 3 << 24 | 0x5000);
    assert_eq!(falcon.read(reg::TLB_CMD_RES), 1 << 31);
    // ITLB clears the page; two pages at one virtual page are a multi-hit (bit 30).
    falcon.write(reg::TLB_CMD, 1 << 24 | 2);
    falcon.write(reg::TLB_CMD, 2 << 24 | 2);
    assert_eq!(falcon.read(reg::TLB_CMD_RES), 0);
    falcon.upload_code(0, 8, &[0; 0x100]);
    falcon.write(reg::TLB_CMD, 3 << 24 | 0x800);
    assert_eq!(falcon.read(reg::TLB_CMD_RES) >> 30, 1);
    // A page half uploaded is busy (flag 1): PTLB shows it.
    falcon.write(reg::CODE_INDEX, 5 << 8 | WRITE_AUTOINC);
    falcon.write(reg::CODE_VIRT, 9);
    falcon.write(reg::CODE, 0);
    falcon.write(reg::TLB_CMD, 2 << 24 | 5);
    assert_eq!(falcon.read(reg::TLB_CMD_RES), 2 << 24 | 9 << 8);
}

#[test]
fn data_ports_auto_increment_and_only_pdaemon_has_four() {
    let gpu = gpu();
    enable_all(&gpu);
    let pdaemon = Falcon::new(&gpu, Engine::Pdaemon);
    pdaemon.upload_data(0x100, &[1, 2, 3, 4]);
    assert_eq!(pdaemon.read_data(0x100, 4), vec![1, 2, 3, 4]);
    // Port 3 (0x1d8/0x1dc) sees the same segment.
    pdaemon.write(0x1d8, 0x104 | READ_AUTOINC);
    assert_eq!((pdaemon.read(0x1dc), pdaemon.read(0x1dc)), (2, 3));
    // Past the data segment (0x3000) nothing is stored.
    pdaemon.upload_data(0x3000, &[0xdead]);
    assert_eq!(pdaemon.read_data(0x3000, 1), vec![0]);
    // PCOPY has one port: port 1 is not there.
    let pcopy = Falcon::new(&gpu, Engine::Pcopy);
    let before = gpu.model().stats().writes_dropped;
    pcopy.write(0x1c8, 0x10 | WRITE_AUTOINC);
    pcopy.write(0x1cc, 5);
    assert_eq!(gpu.model().stats().writes_dropped, before + 2);
    assert_eq!(pcopy.read(0x1cc), 0);
}

/// Sum 16 DMEM words, store the sum after them and into SCRATCH1.
fn checksum_program() -> Vec<u8> {
    program(&[
        &[0xf0, 0x07, 0x00],       // 00 f0/7 mov $r0, 0
        &[0xf0, 0x17, 0x00],       // 03 f0/7 mov $r1, 0
        &[0xf0, 0x27, 0x40],       // 06 f0/7 mov $r2, 0x40
        &[0x98, 0x13, 0x00],       // 09 1x/8 b32 ld $r3, D[$r1 + 0]
        &[0xbb, 0x03, 0x00],       // 0c 3b/0 b32 add $r0, $r3
        &[0xb6, 0x10, 0x04],       // 0f 36/0 b32 add $r1, 4
        &[0xb8, 0x12, 0x06],       // 12 38/6 b32 cmp $r1, $r2
        &[0xf4, 0x1b, 0xf4],       // 15 f4/1b bra ne -0xc (to 09)
        &[0x80, 0x10, 0x00],       // 18 0x/0 b32 st D[$r1 + 0], $r0
        &[0xf1, 0x47, 0x00, 0x11], // 1b f1/7 mov $r4, 0x1100 (SCRATCH1)
        &[0xd0, 0x40, 0x00],       // 1f dx/0 iowr I[$r4], $r0
        &[0xf8, 0x02],             // 22 f8/2 exit
    ])
}

#[test]
fn dmem_checksum_loop_sums_the_segment() {
    let gpu = gpu();
    enable_all(&gpu);
    let words: Vec<u32> = (0..16).map(|i| 0x1111_1111u32.wrapping_mul(i + 1)).collect();
    let sum = words.iter().fold(0u32, |a, &w| a.wrapping_add(w));
    for engine in ENGINES {
        let falcon = Falcon::new(&gpu, engine);
        falcon.upload_data(0, &words);
        falcon.run(&checksum_program());
        assert_eq!(falcon.read(reg::SCRATCH1), sum, "{engine:?}");
        assert_eq!(falcon.read_data(0x40, 1), vec![sum]);
    }
}

#[test]
fn calls_returns_the_stack_and_sized_accesses_keep_the_high_bits() {
    let gpu = gpu();
    let falcon = Falcon::new(&gpu, Engine::Pdaemon);
    let mut code = program(&[
        &[0xf1, 0x07, 0x00, 0x01], // 00 f1/7 mov $r0, 0x100
        &[0xfe, 0x04, 0x00],       // 04 fe/0 mov $sp ($sr4), $r0
        &[0xf1, 0x17, 0x34, 0x12], // 07 f1/7 mov $r1, 0x1234
        &[0xf1, 0x13, 0x78, 0x56], // 0b f1/3 sethi $r1, 0x5678
        &[0xf9, 0x10],             // 0f f9/0 push $r1
        &[0xf4, 0x21, 0x40],       // 11 f4/21 call 0x40
        &[0xfc, 0x20],             // 14 fc/0 pop $r2
        &[0xf0, 0x57, 0x40],       // 16 f0/7 mov $r5, 0x40
        &[0xf0, 0x67, 0xff],       // 19 f0/7 mov $r6, -1
        &[0x80, 0x56, 0x00],       // 1c 0x/0 b32 st D[$r5], $r6
        &[0xf0, 0x77, 0x12],       // 1f f0/7 mov $r7, 0x12
        &[0x00, 0x57, 0x01],       // 22 0x/0 b8 st D[$r5 + 1], $r7
        &[0x58, 0x56, 0x00],       // 25 1x/8 b16 ld $r6, D[$r5 + 0]
        &[0xf1, 0x47, 0x00, 0x11], // 28 f1/7 mov $r4, 0x1100
        &[0xd0, 0x40, 0x00],       // 2c dx/0 iowr I[$r4], $r0
        &[0xf8, 0x02],             // 2f f8/2 exit
    ]);
    code.resize(0x40, 0);
    code.extend_from_slice(&[0xf0, 0x07, 0x2a]); // 40 f0/7 mov $r0, 0x2a
    code.extend_from_slice(&[0xf8, 0x00]); // 43 f8/0 ret
    falcon.run(&code);
    assert_eq!(falcon.read(reg::SCRATCH1), 0x2a, "the subroutine ran and returned");
    let gpr = gpu.model().falcon(Engine::Pdaemon).gpr();
    assert_eq!(gpr[2], 0x5678_1234, "push/pop round trip around the call");
    assert_eq!(falcon.read(reg::UC_SP), 0x100, "balanced stack");
    // b16 ld replaced only the low half: 0xffff_ffff with bytes [0xff, 0x12].
    assert_eq!(gpr[6], 0xffff_12ff);
}

#[test]
fn arithmetic_and_shift_flags_follow_the_pseudocode() {
    let gpu = gpu();
    let falcon = Falcon::new(&gpu, Engine::Pdaemon);
    falcon.run(&program(&[
        &[0xf0, 0x07, 0x01],       // f0/7 mov $r0, 1
        &[0xf0, 0x17, 0x02],       // f0/7 mov $r1, 2
        &[0xbc, 0x01, 0x22],       // 3c/2 b32 sub $r2, $r0, $r1
        &[0xfe, 0x8d, 0x01],       // fe/1 mov $r13, $flags ($sr8)
        &[0xf0, 0x37, 0x7f],       // f0/7 mov $r3, 0x7f
        &[0x36, 0x30, 0x01],       // 36/0 b8 add $r3, 1
        &[0xfe, 0x8c, 0x01],       // fe/1 mov $r12, $flags
        &[0xf0, 0x47, 0x03],       // f0/7 mov $r4, 3
        &[0xb6, 0x45, 0x01],       // 36/5 b32 shr $r4, 1
        &[0xfe, 0x8b, 0x01],       // fe/1 mov $r11, $flags
        &[0xf1, 0x57, 0x80, 0x00], // f1/7 mov $r5, 0x80
        &[0x36, 0x57, 0x07],       // 36/7 b8 sar $r5, 7
        &[0xfe, 0x8a, 0x01],       // fe/1 mov $r10, $flags
        &[0xf0, 0x67, 0x05],       // f0/7 mov $r6, 5
        &[0xb8, 0x61, 0x05],       // 38/5 b32 cmps $r6, $r1
        &[0xfe, 0x89, 0x01],       // fe/1 mov $r9, $flags
        &[0xf0, 0x77, 0x0f],       // f0/7 mov $r7, 0xf
        &[0xc4, 0x78, 0xf0],       // cx/4 and $r8, $r7, 0xf0
        &[0xfe, 0x8e, 0x01],       // fe/1 mov $r14, $flags
        &[0xf8, 0x02],             // f8/2 exit
    ]));
    let (c, o, s, z) = (1 << 8, 1 << 9, 1 << 10, 1 << 11);
    let r = gpu.model().falcon(Engine::Pdaemon).gpr();
    assert_eq!(r[2], u32::MAX, "1 - 2");
    assert_eq!(r[13] & 0xf00, c | s, "borrow and sign, no overflow");
    assert_eq!(r[3], 0x80, "b8 add touched only the low byte");
    assert_eq!(r[12] & 0xf00, o | s, "0x7f + 1 overflows signed 8-bit");
    assert_eq!(r[4], 1);
    assert_eq!(r[11] & 0xf00, c, "shr: the last bit shifted out is 1");
    assert_eq!(r[5], 0xff, "sar fills with the 8-bit sign");
    assert_eq!(r[10] & 0xf00, s, "c = bit 6 of 0x80 = 0");
    assert_eq!(r[9] & (c | z), 0, "cmps 5, 2: not less, not equal");
    assert_eq!(r[9] & s, s, "cmps leaves s as sar set it");
    assert_eq!(r[8], 0);
    assert_eq!(r[14] & 0xf00, z, "and sets z, clears c and o on v3");
}

#[test]
fn unsized_operations_follow_their_pseudocode() {
    let gpu = gpu();
    let falcon = Falcon::new(&gpu, Engine::Pdaemon);
    falcon.run(&program(&[
        &[0xf1, 0x07, 0x34, 0x12], // f1/7 mov $r0, 0x1234
        &[0xf1, 0x03, 0xcd, 0xab], // f1/3 sethi $r0, 0xabcd
        &[0xf0, 0x17, 0x07],       // f0/7 mov $r1, 7
        &[0xff, 0x01, 0x2c],       // ff/c div $r2, $r0, $r1
        &[0xff, 0x01, 0x3d],       // ff/d mod $r3, $r0, $r1
        &[0xc0, 0x04, 0x03],       // cx/0 mulu $r4, $r0, 3
        &[0xc1, 0x05, 0xfe],       // cx/1 muls $r5, $r0, -2
        &[0xc7, 0x06, 0xe8],       // cx/7 extr $r6, $r0, 8 | 7 << 5 (bits 15:8)
        &[0xc3, 0x07, 0x7c],       // cx/3 extrs $r7, $r0, 28 | 3 << 5 (bits 31:28)
        &[0xf0, 0x87, 0xff],       // f0/7 mov $r8, -1
        &[0xcb, 0x08, 0xe4],       // cx/b ins $r8, $r0, 4 | 7 << 5 (bits 11:4)
        &[0xc2, 0x09, 0x04],       // cx/2 sext $r9, $r0, 4
        &[0xc8, 0x0a, 0x1f],       // cx/8 xbit $r10, $r0, 31
        &[0xf2, 0xa8, 0x03],       // f2/8 setp $p3, $r10
        &[0xf0, 0xc7, 0x03],       // f0/7 mov $r12, 3
        &[0xfe, 0xcb, 0x0c],       // fe/c xbit $r11, $flags, $r12
        &[0xbd, 0x03],             // 3d/3 b32 hswap $r0
        &[0xf0, 0x0a, 0x00],       // f0/a bclr $r0, 0
        &[0xc0, 0xd1, 0x00],       // cx/0 mulu $r1, $r13, 0 ($r1 = 0)
        &[0xff, 0x1d, 0xec],       // ff/c div $r14, $r1, $r13 (by 0)
        &[0xf8, 0x02],             // f8/2 exit
    ]));
    let r = gpu.model().falcon(Engine::Pdaemon).gpr();
    let x = 0xabcd_1234u32;
    assert_eq!((r[2], r[3]), (x / 7, x % 7));
    assert_eq!(r[4], 0x1234 * 3, "mulu takes the low 16 bits");
    assert_eq!(r[5], (0x1234i32 * -2) as u32, "muls sign-extends the immediate");
    assert_eq!((r[6], r[7]), (0x12, 0xffff_fffa));
    assert_eq!(r[8], 0xffff_f34f, "ins replaced bits 11:4 with 0x34");
    assert_eq!(r[9], 0xffff_fff4, "bit 4 of 0x34 is the new sign");
    assert_eq!((r[10], r[11]), (1, 1), "xbit, setp, xbit of $flags");
    assert_eq!(r[0], 0x1234_abcc, "hswap then bclr 0");
    assert_eq!(r[14], u32::MAX, "§2.10.3: division by 0 gives 0xffffffff");
}

/// Load 0x100 bytes from (SCRATCH0 << 8) into DMEM 0, store them to (SCRATCH0 << 8) +
/// SCRATCH2, waiting for each.
fn xfer_copy_program() -> Vec<u8> {
    program(&[
        &[0xf1, 0x17, 0x00, 0x10], // 00 f1/7 mov $r1, 0x1000 (SCRATCH0)
        &[0xcf, 0x12, 0x00],       // 04 cx/f iord $r2, I[$r1]
        &[0xfe, 0x27, 0x00],       // 07 fe/0 mov $xdbase ($sr7), $r2
        &[0xf1, 0x47, 0x00, 0x20], // 0a f1/7 mov $r4, 0x2000 (SCRATCH2)
        &[0xcf, 0x43, 0x00],       // 0e cx/f iord $r3, I[$r4]
        &[0xf0, 0x57, 0x00],       // 11 f0/7 mov $r5, 0
        &[0xf0, 0x53, 0x06],       // 14 f0/3 sethi $r5, 6 (local 0, size 6 = 0x100 bytes)
        &[0xf0, 0x67, 0x00],       // 17 f0/7 mov $r6, 0
        &[0xfa, 0x65, 0x05],       // 1a fa/5 xdld $r6, $r5
        &[0xf8, 0x03],             // 1d f8/3 xdwait
        &[0xfa, 0x35, 0x06],       // 1f fa/6 xdst $r3, $r5
        &[0xf8, 0x03],             // 22 f8/3 xdwait
        &[0xf8, 0x02],             // 24 f8/2 exit
    ])
}

fn copy_buffers(gpu: &gpu_device_model::InProcess<Gt215>) -> (u64, u64, Vec<u8>) {
    let layout = DmaLayout::new(0x100, 0x100).unwrap();
    let src = gpu.allocate(layout).unwrap();
    let dst = gpu.allocate(layout).unwrap();
    let data: Vec<u8> = (0..0x100u32).map(|i| (i * 13 + 5) as u8).collect();
    gpu.write_memory(src.bus_address().0, &data).unwrap();
    let (s, d) = (src.bus_address().0, dst.bus_address().0);
    (s, d, data)
}

#[test]
fn xfers_copy_guest_memory_through_the_data_segment() {
    for engine in ENGINES {
        let gpu = gpu();
        enable_all(&gpu);
        let (src, dst, data) = copy_buffers(&gpu);
        let falcon = Falcon::new(&gpu, engine);
        falcon.write(reg::SCRATCH0, (src >> 8) as u32);
        falcon.write(reg::SCRATCH2, (dst - src) as u32);
        falcon.run(&xfer_copy_program());
        let mut out = vec![0; 0x100];
        gpu.read_memory(dst, &mut out).unwrap();
        assert_eq!(out, data, "{engine:?}");
        assert_eq!(falcon.read_data(0, 1)[0], u32::from_le_bytes([5, 18, 31, 44]));
        assert_eq!(falcon.read(reg::XFER_STATUS), 0, "nothing pending");
    }
}

#[test]
fn host_xfer_ports_queue_a_data_load() {
    let gpu = gpu();
    enable_all(&gpu);
    let (src, _, data) = copy_buffers(&gpu);
    let falcon = Falcon::new(&gpu, Engine::Pcopy);
    falcon.write(reg::XFER_EXT_BASE, (src >> 8) as u32);
    falcon.write(reg::XFER_EXT_OFFSET, 0x80);
    falcon.write(reg::XFER_LOCAL_ADDRESS, 0x200);
    // mode 0 (data load), size 5 (0x80 bytes).
    falcon.write(reg::XFER_CTRL, 5 << 8);
    gpu.poll();
    let words = falcon.read_data(0x200, 0x20);
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert_eq!(bytes, data[0x80..]);
}

#[test]
fn code_xfers_map_the_page_at_the_external_offset_and_it_runs() {
    let gpu = gpu();
    enable_all(&gpu);
    let layout = DmaLayout::new(0x800, 0x100).unwrap();
    let buffer = gpu.allocate(layout).unwrap();
    let base = buffer.bus_address().0;
    let loaded = program(&[
        &[0xf1, 0x47, 0x00, 0x11], // f1/7 mov $r4, 0x1100
        &[0xf0, 0x07, 0x77],       // f0/7 mov $r0, 0x77
        &[0xd0, 0x40, 0x00],       // dx/0 iowr I[$r4], $r0
        &[0xf8, 0x02],             // f8/2 exit
    ]);
    gpu.write_memory(base + 0x400, &loaded).unwrap();
    let falcon = Falcon::new(&gpu, Engine::Pdaemon);
    falcon.write(reg::SCRATCH0, (base >> 8) as u32);
    falcon.run(&program(&[
        &[0xf1, 0x17, 0x00, 0x10], // f1/7 mov $r1, 0x1000
        &[0xcf, 0x12, 0x00],       // cx/f iord $r2, I[$r1]
        &[0xfe, 0x26, 0x00],       // fe/0 mov $xcbase ($sr6), $r2
        &[0xf1, 0x37, 0x00, 0x04], // f1/7 mov $r3, 0x400 (external offset = virtual address)
        &[0xf1, 0x47, 0x00, 0x01], // f1/7 mov $r4, 0x100 (physical page 1)
        &[0xfa, 0x34, 0x04],       // fa/4 xcld $r3, $r4
        &[0xf8, 0x07],             // f8/7 xcwait
        &[0xf5, 0x20, 0x00, 0x04], // f5/20 jmp 0x400
    ]));
    assert_eq!(falcon.read(reg::SCRATCH1), 0x77);
    falcon.write(reg::TLB_CMD, 2 << 24 | 1);
    assert_eq!(falcon.read(reg::TLB_CMD_RES), 1 << 24 | 4 << 8, "virtual page 4, usable");
}

#[test]
fn invalid_opcodes_trap_and_a_second_trap_stops_the_falcon() {
    // Each: an opcode or subopcode no §2.10.2 format has.
    let invalid: [&[u8]; 5] =
        [&[0x32, 0, 0], &[0xf3, 0, 0], &[0x36, 0x08, 0x00], &[0xf8, 0x0f], &[0xf4, 0x0f, 0x00]];
    for bytes in invalid {
        let gpu = gpu();
        let falcon = Falcon::new(&gpu, Engine::Pdaemon);
        falcon.write(reg::INTR_ROUTING, 1 << 4); // EXIT to PMC
        falcon.write(reg::INTR_EN_SET, 1 << 4);
        // $tv is 0: the trap re-enters the same opcode with ta set, a double trap (§2.10.8).
        falcon.run(bytes);
        let f = gpu.model();
        let fal = f.falcon(Engine::Pdaemon);
        assert_eq!(fal.tstatus() >> 20, trap::INVALID_OPCODE, "{bytes:x?}");
        assert_eq!(fal.tstatus() & 0xfffff, 0, "$pc unmodified");
        drop(f);
        assert_ne!(gpu.read32(0x100) & 1 << 18, 0, "the host sees the stop through PMC");
    }
}

#[test]
fn software_traps_enter_the_trap_vector_with_tstatus() {
    let gpu = gpu();
    let falcon = Falcon::new(&gpu, Engine::Pdaemon);
    let mut code = program(&[
        &[0xf0, 0x07, 0x20],       // 00 f0/7 mov $r0, 0x20
        &[0xfe, 0x03, 0x00],       // 03 fe/0 mov $tv ($sr3), $r0
        &[0xf1, 0x07, 0x00, 0x01], // 06 f1/7 mov $r0, 0x100
        &[0xfe, 0x04, 0x00],       // 0a fe/0 mov $sp, $r0
        &[0xf8, 0x0a],             // 0d f8/a trap 2
        &[0xf8, 0x02],             // 0f f8/2 exit (not reached)
    ]);
    code.resize(0x20, 0);
    code.extend(program(&[
        &[0xfe, 0xc5, 0x01],       // 20 fe/1 mov $r5, $tstatus ($sr12)
        &[0xf1, 0x47, 0x00, 0x11], // 23 f1/7 mov $r4, 0x1100
        &[0xd0, 0x45, 0x00],       // 27 dx/0 iowr I[$r4], $r5
        &[0xf8, 0x02],             // 2a f8/2 exit
    ]));
    falcon.run(&code);
    // Reason 2 in bits 20-23; $pc already past the trap (§2.10.8 "trap": $pc += oplen).
    assert_eq!(falcon.read(reg::SCRATCH1), 2 << 20 | 0x0f);
}

#[test]
fn a_swgen_interrupt_wakes_a_sleeping_falcon_into_its_vector_and_iret_resumes() {
    let gpu = gpu();
    let falcon = Falcon::new(&gpu, Engine::Pdaemon);
    let mut code = program(&[
        &[0xf0, 0x07, 0x40],       // 00 f0/7 mov $r0, 0x40
        &[0xfe, 0x00, 0x00],       // 03 fe/0 mov $iv0 ($sr0), $r0
        &[0xf1, 0x07, 0x00, 0x02], // 06 f1/7 mov $r0, 0x200
        &[0xfe, 0x04, 0x00],       // 0a fe/0 mov $sp, $r0
        &[0xf4, 0x31, 0x00],       // 0d f4/31 bset $flags, 0 ($p0)
        &[0xf4, 0x31, 0x10],       // 10 f4/31 bset $flags, 0x10 (ie0)
        &[0xf4, 0x28, 0x00],       // 13 f4/28 sleep $p0
        &[0xf1, 0x47, 0x00, 0x20], // 16 f1/7 mov $r4, 0x2000 (SCRATCH2)
        &[0xf0, 0x07, 0x55],       // 1a f0/7 mov $r0, 0x55
        &[0xd0, 0x40, 0x00],       // 1d dx/0 iowr I[$r4], $r0
        &[0xf8, 0x02],             // 20 f8/2 exit
    ]);
    code.resize(0x40, 0);
    code.extend(program(&[
        &[0xf1, 0x47, 0x00, 0x11], // 40 f1/7 mov $r4, 0x1100 (SCRATCH1)
        &[0xf0, 0x07, 0x66],       // 44 f0/7 mov $r0, 0x66
        &[0xd0, 0x40, 0x00],       // 47 dx/0 iowr I[$r4], $r0
        &[0xf0, 0x07, 0x40],       // 4a f0/7 mov $r0, 0x40 (line 6)
        &[0xf1, 0x47, 0x00, 0x01], // 4d f1/7 mov $r4, 0x100 (INTR_CLEAR)
        &[0xd0, 0x40, 0x00],       // 51 dx/0 iowr I[$r4], $r0
        &[0xf4, 0x32, 0x00],       // 54 f4/32 bclr $flags, 0
        &[0xf8, 0x01],             // 57 f8/1 iret
    ]));
    falcon.upload_code(0, 0, &code);
    falcon.write(reg::INTR_EN_SET, 1 << 6);
    falcon.start(0);
    for _ in 0..20 {
        gpu.poll();
    }
    assert_eq!(falcon.read(reg::UC_CTRL), 1 << 5, "sleeping, not stopped");
    assert_eq!(falcon.read(reg::STATUS) & 1, 0, "not busy while sleeping");
    assert_eq!(gpu.model().falcon(Engine::Pdaemon).state(), State::Sleeping);
    falcon.write(reg::INTR_SET, 1 << 6); // SWGEN
    assert!(falcon.wait_halted(1000));
    assert_eq!(falcon.read(reg::SCRATCH1), 0x66, "the vector ran");
    assert_eq!(falcon.read(reg::SCRATCH2), 0x55, "sleep fell through after iret");
    assert_eq!(falcon.read(reg::INTR) & (1 << 6 | 1 << 4), 1 << 4, "acked; EXIT raised");
}

#[test]
fn a_falcon_asleep_on_the_fifo_line_is_idle_until_a_method_arrives_then_wakes_into_its_vector() {
    let gpu = gpu();
    enable_all(&gpu);
    let falcon = Falcon::new(&gpu, Engine::Pcopy);
    let mut code = program(&[
        &[0xf0, 0x07, 0x40],       // 00 f0/7 mov $r0, 0x40
        &[0xfe, 0x00, 0x00],       // 03 fe/0 mov $iv0 ($sr0), $r0
        &[0xf1, 0x07, 0x00, 0x02], // 06 f1/7 mov $r0, 0x200
        &[0xfe, 0x04, 0x00],       // 0a fe/0 mov $sp, $r0
        &[0xf1, 0x47, 0x00, 0x12], // 0d f1/7 mov $r4, 0x1200 (FIFO_ENABLE)
        &[0xf0, 0x07, 0x02],       // 11 f0/7 mov $r0, 2 (ACCESS_EN)
        &[0xd0, 0x40, 0x00],       // 14 dx/0 iowr I[$r4], $r0
        &[0xf4, 0x31, 0x00],       // 17 f4/31 bset $flags, 0 ($p0)
        &[0xf4, 0x31, 0x10],       // 1a f4/31 bset $flags, 0x10 (ie0)
        &[0xf4, 0x28, 0x00],       // 1d f4/28 sleep $p0
        &[0xf1, 0x47, 0x00, 0x20], // 20 f1/7 mov $r4, 0x2000 (SCRATCH2)
        &[0xf0, 0x07, 0x55],       // 24 f0/7 mov $r0, 0x55
        &[0xd0, 0x40, 0x00],       // 27 dx/0 iowr I[$r4], $r0
        &[0xf8, 0x02],             // 2a f8/2 exit
    ]);
    code.resize(0x40, 0);
    code.extend(program(&[
        &[0xf1, 0x47, 0x00, 0x19], // 40 f1/7 mov $r4, 0x1900 (FIFO_DATA)
        &[0xcf, 0x40, 0x00],       // 44 cx/f iord $r0, I[$r4 + 0]
        &[0xf1, 0x47, 0x00, 0x11], // 47 f1/7 mov $r4, 0x1100 (SCRATCH1)
        &[0xd0, 0x40, 0x00],       // 4b dx/0 iowr I[$r4], $r0
        &[0xf1, 0x47, 0x00, 0x1d], // 4e f1/7 mov $r4, 0x1d00 (FIFO_ACK)
        &[0xf0, 0x07, 0x01],       // 52 f0/7 mov $r0, 1
        &[0xd0, 0x40, 0x00],       // 55 dx/0 iowr I[$r4], $r0: the level line drops
        &[0xf4, 0x32, 0x00],       // 58 f4/32 bclr $flags, 0
        &[0xf8, 0x01],             // 5b f8/1 iret
    ]));
    falcon.upload_code(0, 0, &code);
    falcon.write(reg::INTR_EN_SET, 1 << 2); // line 2 FIFO, routed to vector 0
    falcon.start(0);
    for _ in 0..20 {
        gpu.poll();
    }
    assert_eq!(gpu.model().falcon(Engine::Pcopy).state(), State::Sleeping);
    // §2.10.8: SET on a level-triggered line (FIFO) is ignored, so nothing wakes it.
    falcon.write(reg::INTR_SET, 1 << 2);
    assert_eq!(falcon.read(reg::INTR) & 1 << 2, 0, "no FIFO data, no FIFO interrupt");
    for _ in 0..5 {
        assert_eq!(gpu.poll(), gpu_device_model::Activity::Idle, "asleep with nothing pending");
    }
    assert_eq!(
        gpu.model().falcon(Engine::Pcopy).executed(),
        10,
        "nine instructions and the sleep, none while asleep"
    );
    assert!(gpu.model_mut().falcon_mut(Engine::Pcopy).push_method(0, 0x200, 0x1234));
    assert_eq!(falcon.read(reg::INTR) & 1 << 2, 1 << 2, "FIFO data: the level line is up");
    assert!(falcon.wait_halted(1000));
    assert_eq!(falcon.read(reg::SCRATCH1), 0x1234, "the vector read the method's data");
    assert_eq!(falcon.read(reg::SCRATCH2), 0x55, "sleep fell through after iret");
    assert!(gpu.model().falcon(Engine::Pcopy).method_fifo_empty(), "acknowledged");
}

#[test]
fn an_infinite_loop_runs_within_the_instruction_budget_and_pmc_enable_stops_pcopy() {
    let gpu = gpu();
    enable_all(&gpu);
    let spin: &[u8] = &[0xf4, 0x0e, 0x00]; // f4/0e bra 0 (to itself)
    for engine in ENGINES {
        let falcon = Falcon::new(&gpu, engine);
        falcon.upload_code(0, 0, spin);
        falcon.start(0);
    }
    let executed = || gpu.model().falcon(Engine::Pcopy).executed();
    for _ in 0..5 {
        // Run to idle: one poll runs until the device yields, at most YIELD_EVERY ticks.
        let before = executed();
        gpu.poll();
        let ran = executed() - before;
        assert!(ran > 0 && ran <= u64::from(YIELD_EVERY * INSNS_PER_TICK), "{ran}");
    }
    let stats = gpu.model().stats();
    assert_eq!(gpu.error_code(), 0, "never declared hung");
    assert_eq!(stats.max_tick_insns, 2 * INSNS_PER_TICK, "each falcon used its budget");
    assert!(executed() <= stats.ticks * u64::from(INSNS_PER_TICK));
    // PMC.ENABLE holds PCOPY in reset: it stops for good.
    gpu.write32(0x200, 0);
    assert_eq!(gpu.model().falcon(Engine::Pcopy).state(), State::Stopped);
    assert_eq!(gpu.model().falcon(Engine::Pdaemon).state(), State::Running);
}

#[test]
fn xfer_faults_stop_the_falcon_and_report_the_bus_fault() {
    // Injected: the next external fetch faults.
    let gpu = gpu();
    enable_all(&gpu);
    let (src, dst, _) = copy_buffers(&gpu);
    gpu.model_mut().set_faults("dma-fault".parse::<Faults>().unwrap());
    let falcon = Falcon::new(&gpu, Engine::Pcopy);
    falcon.write(reg::SCRATCH0, (src >> 8) as u32);
    falcon.write(reg::SCRATCH2, (dst - src) as u32);
    falcon.upload_code(0, 0, &xfer_copy_program());
    falcon.start(0);
    assert!(falcon.wait_halted(1000));
    assert_eq!(gpu.error_code(), cp_error::DMA_FETCH_FAULT);
    assert!(!gpu.model().faults().dma_fault_next_fetch, "one-shot");
    // Bus address 0 is an unprogrammed address: a fetch from it is a fault.
    let gpu = gpu_with(Some(Pacing::RunToIdle));
    enable_all(&gpu);
    let falcon = Falcon::new(&gpu, Engine::Pcopy);
    falcon.upload_code(0, 0, &xfer_copy_program());
    falcon.start(0);
    assert!(falcon.wait_halted(1000));
    assert_eq!(gpu.error_code(), cp_error::DMA_FETCH_FAULT);
    // A misaligned data xfer is refused.
    let gpu = gpu_with(Some(Pacing::RunToIdle));
    enable_all(&gpu);
    let falcon = Falcon::new(&gpu, Engine::Pcopy);
    falcon.write(reg::XFER_EXT_BASE, 0x10);
    falcon.write(reg::XFER_EXT_OFFSET, 0x4);
    falcon.write(reg::XFER_CTRL, 6 << 8); // 0x100 bytes from an offset aligned to 4
    gpu.poll();
    assert_eq!(gpu.error_code(), cp_error::BAD_CONFIGURATION);
}

#[test]
fn slow_spreads_the_falcons_steps() {
    let gpu = gpu();
    enable_all(&gpu);
    gpu.model_mut().set_faults("slow=50".parse::<Faults>().unwrap());
    let falcon = Falcon::new(&gpu, Engine::Pdaemon);
    falcon.write(reg::SCRATCH0, 1);
    falcon.upload_code(0, 0, &program(ECHO));
    falcon.start(0);
    for _ in 0..40 {
        gpu.poll();
    }
    assert_eq!(gpu.model().falcon(Engine::Pdaemon).executed(), 0, "no step before 50 ticks");
    assert!(falcon.wait_halted(1000));
    assert_eq!(falcon.read(reg::SCRATCH1), 2);
    assert_eq!(gpu.error_code(), 0, "slow, not hung");
}

#[test]
fn results_do_not_depend_on_the_pacing() {
    let words: Vec<u32> = (0..16).map(|i: u32| i.wrapping_mul(0x9E37_79B9) ^ 0x5A5A).collect();
    let expected = words.iter().fold(0u32, |a, &w| a.wrapping_add(w));
    for pacing in pacings() {
        let gpu = gpu_with(Some(pacing));
        enable_all(&gpu);
        let (src, dst, data) = copy_buffers(&gpu);
        let pcopy = Falcon::new(&gpu, Engine::Pcopy);
        pcopy.write(reg::SCRATCH0, (src >> 8) as u32);
        pcopy.write(reg::SCRATCH2, (dst - src) as u32);
        pcopy.upload_code(0, 0, &xfer_copy_program());
        let pdaemon = Falcon::new(&gpu, Engine::Pdaemon);
        pdaemon.upload_data(0, &words);
        pdaemon.upload_code(0, 0, &checksum_program());
        // Both engines run side by side.
        pcopy.start(0);
        pdaemon.start(0);
        assert!(pdaemon.wait_halted(1_000_000), "{pacing}");
        assert!(pcopy.wait_halted(1_000_000), "{pacing}");
        assert_eq!(pdaemon.read(reg::SCRATCH1), expected, "{pacing}");
        let mut out = vec![0; 0x100];
        gpu.read_memory(dst, &mut out).unwrap();
        assert_eq!(out, data, "{pacing}");
    }
}
