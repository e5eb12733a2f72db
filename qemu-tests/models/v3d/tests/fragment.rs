//! Fragment-shader threads on the QPUs through the renderer's seam (`shading`): §5 (tile
//! buffer writes and colour reads), §6 (initial data, varyings interpolation), §3 (the
//! thread end and the scoreboard rules). A test-only renderer steps the thread from the
//! model's tick with a small budget, as the control-list executor does.
mod common;
use common::*;
use v3d_model::shading::{FragmentBatch, FragmentOutput, LANES, ShadingStep, VaryingInput};

fn batch(code: u32) -> FragmentBatch {
    FragmentBatch {
        code_address: code,
        uniforms_address: UNIFORMS,
        single_threaded: false,
        x: core::array::from_fn(|i| 10 + (i % 4) as u16),
        y: core::array::from_fn(|i| 20 + (i / 4) as u16),
        coverage: 0xFFFF,
        reverse: false,
        w: [2.0; LANES],
        z: core::array::from_fn(|i| 0x1000 * i as u32),
        varyings: vec![],
        tile_colour: [0x1020_3040; LANES],
    }
}

fn shade(program: &[u64], b: FragmentBatch) -> (ShadingStep, u32) {
    let (step, ticks) = shade_with(program, b, None, 1000);
    (step.expect("the thread finished"), ticks)
}

/// The fragment shader end (§3 "Thread Control"; Mesa vc4_qpu_emit.c ends this way): thread
/// end, a nop, and a nop with the scoreboard unlock signal.
fn fs_end() -> Vec<u64> {
    vec![END.word(), NOP.word(), I { sig: 5, ..NOP }.word()]
}

fn output(step: ShadingStep) -> FragmentOutput {
    match step {
        ShadingStep::Done(o) => o,
        other => panic!("not done: {other:?}"),
    }
}

#[test]
fn a_constant_colour_shader_writes_every_lane() {
    // §5 "Color Read and Write": TLB_COLOUR_ALL writes every multisample. The write is the
    // third instruction: §3 forbids the implicit scoreboard wait in the first two.
    let mut p = vec![ldi(R0, 0xFF33_6699), w(NOP), w(mov(TLB_COLOUR_ALL, M_R0))];
    p.extend(fs_end());
    let (step, ticks) = shade(&p, batch(CODE));
    let o = output(step);
    assert_eq!(o.colour, [0xFF33_6699; LANES]);
    assert_eq!((o.colour_written, o.z_written), (0xFFFF, 0));
    assert!(ticks >= 2, "six instructions at four a tick take two ticks");
}

#[test]
fn varyings_interpolate_as_partial_times_w_plus_c() {
    // §6 "Varyings Interpolation": VARYING_READ gives (A(x-x0) + B(y-y0)) and loads C into
    // r5; the shader computes Vp * W + C (W in regfile A 15), then packs it as 8-bit colour
    // with the mul pipe (§3 Table 9, pm set, pack 3).
    let partial: [f32; LANES] = core::array::from_fn(|i| i as f32 / 64.0);
    let mut b = batch(CODE);
    b.varyings = vec![VaryingInput { partial, c: 0.25 }];
    let mut p = vec![
        w(I { raddr_a: 15, raddr_b: VARY, ..mul_op(1, R0, M_A, M_B) }),
        w(add_op(1, R1, M_R0, M_R5)),
        // fmul tlb_colour_all.8888 = r1 * 1.0 (small immediate 32 = 1.0).
        w(I { sig: 13, raddr_b: 32, pm: 1, pack: 3, ..mul_op(1, TLB_COLOUR_ALL, M_R1, M_B) }),
        // Z from regfile B 15 (§6 Table 29) to TLB_Z, not in the last instruction.
        w(I { raddr_b: 15, ..mov(TLB_Z, M_B) }),
    ];
    p.extend(fs_end());
    let o = output(shade(&p, b).0);
    for (i, p) in partial.iter().enumerate() {
        let v = p * 2.0 + 0.25;
        let c = (v * 255.0).round().clamp(0.0, 255.0) as u32;
        assert_eq!(o.colour[i], c * 0x0101_0101, "lane {i}");
        assert_eq!(o.z[i], 0x1000 * i as u32);
    }
    assert_eq!((o.colour_written, o.z_written), (0xFFFF, 0xFFFF));
}

#[test]
fn a_colour_load_reads_the_tile_and_conditions_mask_lanes() {
    // §5: the colour-load signal puts the tile colour in r4 for the next instruction; a
    // conditional write (ZS after flags from the element number minus 3) writes one lane.
    let mut p = vec![
        ldi(R0, 0x0101_0101),
        // sub.sf nop = element_number - 3 (small immediate 3): Z set in lane 3 only.
        w(I { sf: 1, sig: 13, raddr_a: ELEM, raddr_b: 3, ..add_op(13, NOP_ADDR, M_A, M_B) }),
        w(I { sig: 8, ..NOP }),
        // v8adds tlb_colour_all = r4 + r0, where Z is set.
        w(I { cond_mul: 2, ..mul_op(6, TLB_COLOUR_ALL, M_R4, M_R0) }),
    ];
    p.extend(fs_end());
    let o = output(shade(&p, batch(CODE)).0);
    assert_eq!(o.colour_written, 1 << 3);
    assert_eq!(o.colour[3], 0x1121_3141);
}

#[test]
fn fragment_shaders_that_break_the_rules_fault() {
    let cases: Vec<(&str, Vec<u64>, &str)> = vec![
        ("VPM access", vec![w(mov(VPM, M_R0))], "VPM access from a fragment shader (§7)"),
        (
            "early TLB write",
            vec![w(mov(TLB_COLOUR_ALL, M_R0))],
            "scoreboard wait in the first two instructions of a fragment shader",
        ),
        (
            "unread varying",
            vec![w(NOP)],
            "fragment shader ended without reading every varying (§6)",
        ),
        (
            "MS_FLAGS after TLB Z",
            vec![w(NOP), w(NOP), w(I { raddr_b: 15, ..mov(TLB_Z, M_B) }), w(mov_a(R0, 42))],
            "multisample mask read in the two instructions after a TLB Z write",
        ),
        (
            "other thread's registers",
            vec![w(mov(20, M_R0))],
            "threaded shader wrote a regfile location of the other thread (16-31)",
        ),
    ];
    for (what, mut p, reason) in cases {
        p.extend(fs_end());
        let mut b = batch(CODE);
        if what == "unread varying" {
            b.varyings = vec![VaryingInput { partial: [0.0; LANES], c: 0.0 }];
        }
        match shade(&p, b).0 {
            ShadingStep::Fault(f) => assert_eq!(f.reason, reason, "{what}"),
            other => panic!("{what}: {other:?}"),
        }
    }
}
