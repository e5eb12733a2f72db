//! The corpus: hostile binning lists and shaders, each refused with the rule it breaks at the
//! offset of the record or instruction that breaks it, and valid ones, each accepted. Every
//! case is the valid sample with one change.

use baregpu_qpu_asm::isa::{Alu, Instruction, Signal};
use baregpu_vc4_validate::sample::{self, Sample};
use baregpu_vc4_validate::{
    Buffers, ListError, ListRule, Options, ShaderError, ShaderRule, validate_binning_list,
    validate_shader,
};

fn check(s: &Sample, list: &[u8], options: &Options) -> Result<(), ListError> {
    let buffers = s.buffers();
    validate_binning_list(list, &Buffers::new(&buffers), options).map(|_| ())
}

/// The sample's GL list with `edit` applied, validated with Linux's options.
fn gl(edit: impl FnOnce(&mut Vec<u8>, &mut Sample)) -> Result<(), ListError> {
    let mut s = Sample::new();
    let (bytes, len) = s.binning_list(false);
    let mut list = bytes[..len].to_vec();
    edit(&mut list, &mut s);
    check(&s, &list, &Options::LINUX)
}

/// Offsets of the sample GL list's records.
const CONFIG: usize = 0; // 112, 16 bytes
const START: usize = 16; // 6
const STATE: usize = 19; // after 56 (2 bytes): 64, 5 bytes
const DRAW: usize = 24; // 33, 10 bytes
const SEMAPHORE: usize = 34;

fn refused(result: Result<(), ListError>, offset: usize, rule: ListRule) {
    assert_eq!(result, Err(ListError { offset, rule }));
}

#[test]
fn the_valid_samples_are_accepted() {
    let s = Sample::new();
    let buffers = s.buffers();
    let (gl, len) = s.binning_list(false);
    let summary =
        validate_binning_list(&gl[..len], &Buffers::new(&buffers), &Options::LINUX).unwrap();
    assert_eq!(
        (summary.tiles_x, summary.tiles_y, summary.draws, summary.shader_states),
        (2, 2, 1, 1)
    );
    assert_eq!(summary.tile_allocation, sample::TILE_ALLOCATION.0);
    assert_eq!((summary.tile_allocation_bytes, summary.initial_block_bytes), (0x1000, 32));
    let (nv, len) = s.binning_list(true);
    assert!(validate_binning_list(&nv[..len], &Buffers::new(&buffers), &Options::NV).is_ok());
    let info = validate_shader(&s.code).unwrap();
    assert_eq!((info.instructions, info.threaded, info.uniforms), (6, false, 0));
}

#[test]
fn nv_shader_state_is_refused_unless_the_option_allows_it() {
    let s = Sample::new();
    let (nv, len) = s.binning_list(true);
    refused(check(&s, &nv[..len], &Options::LINUX), STATE, ListRule::NotAllowed { id: 65 });
}

#[test]
fn hostile_records() {
    // Unknown id, a record the whitelist lacks (104), a rendering-only record, cut short.
    refused(gl(|l, _| l.insert(START + 1, 250)), START + 1, ListRule::UnknownRecord { id: 250 });
    refused(
        gl(|l, _| l.splice(START + 1..START + 1, [104; 9]).for_each(drop)),
        START + 1,
        ListRule::NotAllowed { id: 104 },
    );
    refused(gl(|l, _| l.insert(START + 1, 115)), START + 1, ListRule::NotAllowed { id: 115 });
    refused(gl(|l, _| l.truncate(DRAW + 4)), DRAW, ListRule::Truncated { id: 33 });
    // A branch would leave the validated bytes.
    refused(
        gl(|l, _| l.splice(START + 1..START + 1, [16, 0, 0, 0, 0x10]).for_each(drop)),
        START + 1,
        ListRule::NotAllowed { id: 16 },
    );
}

#[test]
fn the_binning_configuration_rules() {
    refused(
        gl(|l, _| {
            let config: Vec<u8> = l[..16].to_vec();
            l.splice(START..START, config).for_each(drop);
        }),
        START,
        ListRule::BinningConfigRepeated,
    );
    refused(gl(|l, _| l.swap(CONFIG, START)), CONFIG, ListRule::StartBeforeBinningConfig);
    refused(gl(|l, _| l.insert(START, 6)), START + 1, ListRule::StartRepeated);
    refused(
        gl(|l, _| {
            l.remove(START);
        }),
        SEMAPHORE + 1,
        ListRule::MissingStartTileBinning,
    );
    refused(gl(|l, _| l[14] = 0), CONFIG, ListRule::ZeroTiles);
    refused(gl(|l, _| l[15] |= 1 << 7), CONFIG, ListRule::DoubleBuffer);
    refused(gl(|l, _| l[15] |= 1 << 1), CONFIG, ListRule::Color64Bit);
    refused(gl(|l, _| l[15] &= !(1 << 2)), CONFIG, ListRule::TileStateNotAutoInitialised);
    // Tile allocation past its buffer; too small for one 32-byte block per tile of 255x2.
    let size = |l: &mut Vec<u8>, v: u32| l[5..9].copy_from_slice(&v.to_le_bytes());
    refused(gl(|l, _| size(l, 0x1001)), CONFIG, ListRule::TileAllocationOutside);
    refused(gl(|l, _| l[13] = 255), CONFIG, ListRule::TileAllocationTooSmall);
    // Tile state in the tile allocation buffer, or misaligned.
    let ts = |l: &mut Vec<u8>, v: u32| l[9..13].copy_from_slice(&v.to_le_bytes());
    refused(gl(|l, _| ts(l, 0x0010_0000)), CONFIG, ListRule::TileStateOutside);
    refused(gl(|l, _| ts(l, 0x0011_0008)), CONFIG, ListRule::TileStateOutside);
    // An address outside every buffer.
    refused(
        gl(|l, _| l[1..5].copy_from_slice(&0x3000_0000u32.to_le_bytes())),
        CONFIG,
        ListRule::AddressOutsideBuffers { address: 0x3000_0000 },
    );
}

#[test]
fn the_list_ends_with_increment_semaphore_then_flush() {
    refused(
        gl(|l, _| {
            l.pop();
        }),
        SEMAPHORE,
        ListRule::SemaphoreNotSecondLast,
    );
    refused(gl(|l, _| l.insert(SEMAPHORE + 1, 1)), SEMAPHORE, ListRule::SemaphoreNotSecondLast);
    // A NOP before the end records is fine.
    assert!(gl(|l, _| l.insert(SEMAPHORE, 1)).is_ok());
    refused(gl(|l, _| l.push(1)), SEMAPHORE, ListRule::SemaphoreNotSecondLast);
    refused(gl(|l, _| l.insert(SEMAPHORE, 4)), SEMAPHORE, ListRule::FlushNotLast);
    refused(gl(|l, _| l.truncate(SEMAPHORE)), SEMAPHORE, ListRule::MissingEnd);
    // HALT stops the walk: the end records after it are never reached.
    refused(gl(|l, _| l.insert(SEMAPHORE, 0)), SEMAPHORE + 3, ListRule::MissingEnd);
}

#[test]
fn draws_need_a_shader_state_and_stay_inside_their_buffers() {
    refused(
        gl(|l, _| drop(l.drain(STATE..STATE + 5))),
        DRAW - 5,
        ListRule::PrimitiveWithoutShaderState,
    );
    // 4 vertices: the fourth is past the 128-byte buffer (64 + 3 * 12 + 12 = 112 fits, 4: 124
    // fits, 6: 148 does not).
    let length = |l: &mut Vec<u8>, v: u32| l[DRAW + 2..DRAW + 6].copy_from_slice(&v.to_le_bytes());
    assert!(gl(|l, _| length(l, 5)).is_ok());
    refused(gl(|l, _| length(l, 6)), DRAW, ListRule::AttributeOutOfBounds { attribute: 0 });
    // A first vertex far away, and one whose arithmetic overflows.
    let first = |l: &mut Vec<u8>, v: u32| l[DRAW + 6..DRAW + 10].copy_from_slice(&v.to_le_bytes());
    refused(gl(|l, _| first(l, 1000)), DRAW, ListRule::AttributeOutOfBounds { attribute: 0 });
    refused(gl(|l, _| first(l, u32::MAX)), DRAW, ListRule::AttributeOutOfBounds { attribute: 0 });
    // A stride that reaches past the buffer.
    refused(gl(|_, s| s.records[41] = 100), DRAW, ListRule::AttributeOutOfBounds { attribute: 0 });
}

#[test]
fn indexed_draws_check_the_index_list() {
    use baregpu_hal::dma::BusAddress;
    use baregpu_vc4_validate::{Buffer, Purposes};
    let s = Sample::new();
    let (bytes, len) = s.binning_list(false);
    let indices = [0u8, 0, 1, 0, 2, 0, 9, 0];
    let draw = |count: u8, max: u8, at: u32| {
        let mut list = bytes[..len].to_vec();
        // 32: 16-bit triangles, count, address, maximum index (Table 38).
        let mut record = vec![32, 0x14, count, 0, 0, 0];
        record.extend_from_slice(&at.to_le_bytes());
        record.extend_from_slice(&[max, 0, 0, 0]);
        list.splice(DRAW..DRAW + 10, record).for_each(drop);
        let mut buffers = s.buffers().to_vec();
        buffers.push(Buffer::with_contents(BusAddress(0x0015_0000), &indices, Purposes::INDICES));
        validate_binning_list(&list, &Buffers::new(&buffers), &Options::LINUX).map(|_| ())
    };
    assert!(draw(3, 2, 0x0015_0000).is_ok());
    refused(draw(4, 2, 0x0015_0000), DRAW, ListRule::IndexAboveMaximum { index: 9 });
    refused(draw(4, 9, 0x0015_0000), DRAW, ListRule::AttributeOutOfBounds { attribute: 0 });
    refused(draw(3, 2, 0x0015_0004), DRAW, ListRule::IndicesOutside);
    refused(draw(3, 2, 0x0012_0000), DRAW, ListRule::IndicesOutside);
}

#[test]
fn shader_records_are_checked() {
    // Misaligned: the GL record address is 16-byte units, so move the NV one.
    let s = Sample::new();
    let (nv, len) = s.binning_list(true);
    let mut list = nv[..len].to_vec();
    list[STATE + 1] += 4;
    refused(check(&s, &list, &Options::NV), STATE, ListRule::ShaderRecordMisaligned);
    // A record in a buffer without that purpose (the code buffer).
    refused(
        gl(|l, _| l[STATE + 1..STATE + 5].copy_from_slice(&0x0013_0001u32.to_le_bytes())),
        STATE,
        ListRule::ShaderRecordOutside,
    );
    // 8 attribute arrays: 100 bytes from offset 0 fit, but array 1's base is 0.
    refused(gl(|l, _| l[STATE + 1] &= !7), STATE, ListRule::AttributeOutside { attribute: 1 });
    // Shader code not at the start of its buffer, or in the uniforms buffer.
    let put =
        |s: &mut Sample, at: usize, v: u32| s.records[at..at + 4].copy_from_slice(&v.to_le_bytes());
    refused(
        gl(|_, s| put(s, 4, 0x0013_0008)),
        STATE,
        ListRule::ShaderNotAtBufferStart { address: 0x0013_0008 },
    );
    refused(
        gl(|_, s| put(s, 16, 0x0014_0000)),
        STATE,
        ListRule::ShaderNotAtBufferStart { address: 0x0014_0000 },
    );
    // The fragment shader flagged threaded though it never switches threads.
    refused(gl(|_, s| s.records[0] = 0), STATE, ListRule::ThreadingMismatch);
    // Uniforms outside their buffers: the shader reads one, the stream starts at the end.
    refused(
        gl(|_, s| {
            s.code[..8].copy_from_slice(&mov_r0_unif());
            put(s, 8, 0x0014_0010);
        }),
        STATE,
        ListRule::UniformsOutside,
    );
    assert!(
        gl(|_, s| {
            s.code[..8].copy_from_slice(&mov_r0_unif());
            put(s, 8, 0x0014_000c);
        })
        .is_ok()
    );
    // A shader the shader rules refuse: the error names the rule, and is the source.
    let e = gl(|_, s| s.code[16..24].fill(0)).unwrap_err();
    assert_eq!(
        e.rule,
        ListRule::Shader(ShaderError {
            offset: 16,
            rule: ShaderRule::ForbiddenSignal { signal: 0 }
        })
    );
    assert!(core::error::Error::source(&e).is_some());
    // A vertex shader that switches threads.
    refused(
        gl(|_, s| {
            let switch = alu(2, 39, 39, 0, 0, 39, 39, 0, 0);
            let code = shader(&[switch, nop(), nop()]);
            s.code[..code.len()].copy_from_slice(&code);
            s.records[0] = 0; // the FS is threaded now too: its flag says so
        }),
        STATE,
        ListRule::VertexShaderThreaded,
    );
    // A TMU lookup (T then S): configured from uniforms the validator does not check.
    refused(
        gl(|_, s| {
            let code =
                shader(&[alu(1, 57, 39, 1, 21, 39, 39, 0, 0), alu(1, 56, 39, 1, 21, 39, 39, 0, 0)]);
            s.code[..code.len()].copy_from_slice(&code);
        }),
        STATE,
        ListRule::TmuLookup,
    );
}

/// An ALU instruction from its fields (§3 encoding): signal, add and mul write addresses,
/// add condition, add opcode, read addresses A and B, add input muxes.
#[allow(clippy::too_many_arguments)]
fn alu(
    sig: u32,
    waddr_add: u32,
    waddr_mul: u32,
    cond_add: u32,
    op_add: u32,
    raddr_a: u32,
    raddr_b: u32,
    add_a: u32,
    add_b: u32,
) -> [u8; 8] {
    let hi = sig << 28 | cond_add << 17 | waddr_add << 6 | waddr_mul;
    let lo = op_add << 24 | raddr_a << 18 | raddr_b << 12 | add_a << 9 | add_b << 6;
    instruction(hi, lo)
}

/// One instruction's bytes from its high and low words (stored low first, §3).
fn instruction(hi: u32, lo: u32) -> [u8; 8] {
    (u64::from(hi) << 32 | u64::from(lo)).to_le_bytes()
}

/// The bytes of an ALU no-op with `signal`, encoded by the QPU assembler.
fn signal(signal: Signal) -> [u8; 8] {
    Instruction::Alu(Alu::signal(signal)).encode().unwrap().to_le_bytes()
}

fn nop() -> [u8; 8] {
    signal(Signal::None)
}

/// `or r0, unif, unif` (add opcode 21, both inputs file A, which reads the uniform stream).
fn mov_r0_unif() -> [u8; 8] {
    alu(1, 32, 39, 1, 21, 32, 39, 6, 6)
}

/// `ldi <waddr_add>, value` unconditionally.
fn ldi(waddr_add: u32, value: u32) -> [u8; 8] {
    instruction(14 << 28 | 1 << 17 | waddr_add << 6 | 39, value)
}

/// A relative branch (always, cond 15) by `offset` bytes from PC+4.
fn branch(offset: i32) -> [u8; 8] {
    instruction(15 << 28 | 15 << 20 | 1 << 19 | 39 << 6 | 39, offset as u32)
}

/// `program` then thread end and two nops.
fn shader(program: &[[u8; 8]]) -> Vec<u8> {
    let mut code: Vec<u8> = program.iter().flatten().copied().collect();
    for i in [signal(Signal::ProgramEnd), nop(), nop()] {
        code.extend_from_slice(&i);
    }
    code
}

fn shader_refused(code: &[u8], instruction: usize, rule: ShaderRule) {
    assert_eq!(
        validate_shader(code),
        Err(ShaderError { offset: instruction * 8, rule }),
        "{rule:?}"
    );
}

#[test]
fn valid_shaders() {
    let nop = nop();
    // Uniforms counted; an accepted uniform-address write: ldi r1, 8 (one uniform read so
    // far, plus 4), then add unifs_addr, r1, unif.
    let code = shader(&[mov_r0_unif(), ldi(33, 8), alu(1, 40, 39, 1, 12, 32, 39, 1, 6)]);
    let info = validate_shader(&code).unwrap();
    assert_eq!((info.uniforms, info.uniform_address_write_count), (2, 1));
    assert_eq!(info.uniform_address_writes[0], 1);
    // A forward branch over four nops, into the code before the end.
    let code = shader(&[branch(8), nop, nop, nop, nop, nop]);
    assert_eq!(validate_shader(&code).unwrap().instructions, 9);
    // A threaded shader: switches 3 apart, registers 0-15.
    let switch = alu(2, 39, 39, 0, 0, 39, 39, 0, 0);
    let code = shader(&[switch, nop, nop, switch, nop, nop, alu(1, 15, 39, 1, 21, 15, 39, 6, 6)]);
    assert!(validate_shader(&code).unwrap().threaded);
}

#[test]
fn hostile_shaders() {
    let nop = nop();
    let switch = alu(2, 39, 39, 0, 0, 39, 39, 0, 0);
    // No end; the end's delay slots outside the buffer.
    shader_refused(&[nop, nop].concat(), 2, ShaderRule::MissingThreadEnd);
    shader_refused(
        &[nop, signal(Signal::ProgramEnd), nop].concat(),
        1,
        ShaderRule::ThreadEndDelaySlotsOutside,
    );
    // A reserved encoding (add opcode 9, §3 Table 12).
    shader_refused(
        &shader(&[alu(1, 39, 39, 0, 9, 39, 39, 0, 0)]),
        0,
        ShaderRule::Undecodable(baregpu_qpu_asm::DecodeError::ReservedAddOp(9)),
    );
    // Forbidden signals.
    for signal in [0, 7, 9, 12] {
        let code = shader(&[nop, alu(signal, 39, 39, 0, 0, 39, 39, 0, 0)]);
        shader_refused(&code, 1, ShaderRule::ForbiddenSignal { signal: signal as u8 });
    }
    // Thread switches too close; a branch just after a switch; a threaded shader naming
    // register 16 (read) and 31 (write).
    shader_refused(&shader(&[switch, nop, switch]), 2, ShaderRule::ThreadSwitchTooClose);
    shader_refused(&shader(&[switch]), 1, ShaderRule::ThreadSwitchTooClose);
    shader_refused(
        &shader(&[switch, branch(0), nop, nop, nop, nop]),
        1,
        ShaderRule::BranchNearThreadSwitch,
    );
    shader_refused(
        &shader(&[switch, nop, nop, alu(1, 32, 39, 1, 21, 16, 39, 6, 6)]),
        3,
        ShaderRule::ThreadedRegister { register: 16 },
    );
    shader_refused(
        &shader(&[switch, nop, nop, alu(1, 31, 39, 1, 21, 0, 39, 6, 6)]),
        3,
        ShaderRule::ThreadedRegister { register: 31 },
    );
    // Writes that reach the host, memory or other QPUs, from either unit.
    for register in [38, 36, 47, 51, 50] {
        let code = shader(&[alu(1, 39, register, 0, 0, 39, 39, 0, 0)]);
        shader_refused(&code, 0, ShaderRule::ForbiddenWrite { register: register as u8 });
    }
    // TMU: five parameters; a uniform read in a parameter write; S alone (direct read).
    let t = alu(1, 57, 39, 1, 21, 0, 39, 6, 6);
    let tmu = [t, t, t, t, alu(1, 56, 39, 1, 21, 0, 39, 6, 6)];
    shader_refused(&shader(&tmu), 4, ShaderRule::TooManyTmuParameters);
    shader_refused(
        &shader(&[alu(1, 57, 39, 1, 21, 32, 39, 6, 6)]),
        0,
        ShaderRule::UniformInTmuSetup,
    );
    shader_refused(&shader(&[alu(1, 56, 39, 1, 21, 0, 39, 6, 6)]), 0, ShaderRule::DirectTmuLookup);
    // Uniform-address writes: wrong offset, conditional, from a non-immediate, by the mul unit.
    let write = alu(1, 40, 39, 1, 12, 32, 39, 1, 6);
    shader_refused(&shader(&[ldi(33, 8), write]), 1, ShaderRule::UniformAddressForm);
    shader_refused(
        &shader(&[ldi(33, 4), alu(1, 40, 39, 2, 12, 32, 39, 1, 6)]),
        1,
        ShaderRule::UniformAddressForm,
    );
    shader_refused(
        &shader(&[ldi(33, 4), alu(1, 33, 39, 1, 21, 0, 39, 6, 6), write]),
        2,
        ShaderRule::UniformAddressForm,
    );
    shader_refused(
        &shader(&[alu(1, 39, 40, 0, 0, 39, 39, 0, 0)]),
        0,
        ShaderRule::UniformAddressForm,
    );
    shader_refused(
        &shader(&[
            ldi(33, 4),
            write,
            ldi(33, 8),
            write,
            ldi(33, 12),
            write,
            ldi(33, 16),
            write,
            ldi(33, 20),
            write,
        ]),
        9,
        ShaderRule::TooManyUniformAddressWrites,
    );
    // Branches: absolute, through a register, misaligned, outside, to the end, too close,
    // and a uniform read after one.
    let mut absolute = branch(8);
    absolute[6] &= !(1 << 3);
    shader_refused(&shader(&[absolute, nop, nop, nop, nop, nop]), 0, ShaderRule::BranchNotRelative);
    let mut via = branch(8);
    via[6] |= 1 << 2;
    shader_refused(&shader(&[via, nop, nop, nop, nop, nop]), 0, ShaderRule::BranchViaRegister);
    shader_refused(&shader(&[branch(4), nop, nop, nop, nop]), 0, ShaderRule::BranchMisaligned);
    shader_refused(&shader(&[nop, branch(-48), nop, nop, nop, nop]), 1, ShaderRule::BranchOutside);
    shader_refused(&shader(&[branch(800), nop, nop, nop, nop]), 0, ShaderRule::BranchOutside);
    shader_refused(&shader(&[branch(8), nop, nop, nop, nop]), 0, ShaderRule::BranchToEnd);
    shader_refused(
        &shader(&[branch(40), nop, nop, branch(0), nop, nop, nop, nop, nop, nop]),
        3,
        ShaderRule::BranchTooClose,
    );
    shader_refused(
        &shader(&[branch(0), nop, nop, nop, mov_r0_unif(), nop]),
        4,
        ShaderRule::UniformAfterBranch,
    );
}
