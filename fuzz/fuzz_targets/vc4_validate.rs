//! The VideoCore IV validator (`baregpu-vc4-validate`) on mutants of its valid sample: the
//! input is a list of byte edits to the binning list, the shader records and vertices, the
//! shader code and the uniforms (the first byte picks the GL or the NV list). Validation never
//! panics; a list it accepts keeps every address the V3D would follow inside the buffers
//! handed in, checked here by walking the accepted list's address fields and the shader
//! records they name; an accepted shader ends, delay slots included, inside its code. An
//! accepted NV-mode list is then run on the emulated V3D (v3d-model, with a rendering list
//! built here for the tiles the list configures) over guest memory that asserts every read
//! stays inside the buffers handed in, the two lists and the frame buffer, and every write
//! inside the tile memory and the frame buffer. (GL-mode lists are not run: the model shades
//! NV-mode vertices only.)
#![no_main]

use baregpu_regs::packet::{Walked, records};
use baregpu_regs::vc4::packets::{self as cl, tile_binning_mode_configuration as tbmc};
use baregpu_vc4_validate::sample::{RECORDS, Sample};
use baregpu_vc4_validate::{
    Buffer, Buffers, INSTRUCTION_BYTES, ListSummary, Options, validate_binning_list,
    validate_shader,
};
use libfuzzer_sys::fuzz_target;

#[path = "vc4_validate_model.rs"]
mod model;

fn inside(buffers: &[Buffer<'_>], address: u64, len: u64) -> bool {
    buffers.iter().any(|b| b.offset_of(address, len).is_some())
}

fn word(bytes: &[u8], at: usize) -> u64 {
    u64::from(u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()))
}

/// Every address the accepted list makes the V3D use, inside a buffer.
fn check_accepted(list: &[u8], s: &Sample, buffers: &[Buffer<'_>]) {
    for step in records(cl::ALL, list) {
        let Walked::Record { record, bytes, .. } = step else {
            panic!("accepted list does not walk whole: {step:?}");
        };
        if record.opcode == cl::HALT.opcode {
            break;
        }
        for field in record.fields.iter().filter(|f| f.is_address()) {
            let a = field.address(bytes).0;
            assert!(inside(buffers, a, 1), "{} address {a:#x} outside", record.name);
        }
        if record.opcode == cl::TILE_BINNING_MODE_CONFIGURATION.opcode {
            let tiles = tbmc::WIDTH.get(bytes) * tbmc::HEIGHT.get(bytes);
            let ta = tbmc::TILE_ALLOCATION_MEMORY_ADDRESS.address(bytes).0;
            assert!(inside(buffers, ta, tbmc::TILE_ALLOCATION_MEMORY_SIZE.get(bytes)));
            let ts = tbmc::TILE_STATE_DATA_ARRAY_BASE_ADDRESS.address(bytes).0;
            assert!(inside(buffers, ts, tiles * 48));
        }
        let (record_at, attributes) = match record.opcode {
            64 => {
                let n = cl::gl_shader_state::NUMBER_OF_ATTRIBUTE_ARRAYS.get(bytes) as usize;
                let at = cl::gl_shader_state::MEMORY_ADDRESS_OF_SHADER_RECORD.address(bytes).0;
                (at, if n == 0 { 8 } else { n })
            }
            65 => (cl::nv_shader_state::MEMORY_ADDRESS_OF_SHADER_RECORD.address(bytes).0, 0),
            _ => continue,
        };
        // The record lies in the records buffer; the code, uniforms (as many as the shader
        // reads) and vertex addresses it holds inside buffers too.
        let offset = (record_at - RECORDS.0) as usize;
        let uniforms = u64::from(validate_shader(&s.code).expect("accepted").uniforms) * 4;
        let mut fields = vec![(4, 8), (8, uniforms)];
        if record.opcode == 65 {
            fields.push((12, 1));
        } else {
            fields.extend([(16, 8), (20, uniforms), (28, 8), (32, uniforms)]);
            fields.extend((0..attributes).map(|n| (36 + 8 * n, 1)));
        }
        for (f, len) in fields {
            let a = word(&s.records, offset + f);
            assert!(inside(buffers, a, len), "shader record field {f}: {a:#x} + {len} outside");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, edits)) = data.split_first() else { return };
    let nv = mode & 1 != 0;
    let mut s = Sample::new();
    let (mut list, mut len) = s.binning_list(nv);
    if mode & 2 != 0 {
        len = usize::from(mode >> 2).min(len); // a list cut short
    }
    for e in edits.chunks_exact(3) {
        let pos = usize::from(e[0] & 0x3f) << 8 | usize::from(e[1]);
        let target: &mut [u8] = match e[0] >> 6 {
            0 => &mut list[..len.max(1)],
            1 => &mut s.records,
            2 => &mut s.code,
            _ => &mut s.uniforms,
        };
        let n = target.len();
        target[pos % n] = e[2];
    }
    let buffers = s.buffers();
    let options = if nv { Options::NV } else { Options::LINUX };
    if let Ok(summary) = validate_binning_list(&list[..len], &Buffers::new(&buffers), &options) {
        check_accepted(&list[..len], &s, &buffers);
        if nv {
            let binned = run_on_model(&list[..len], &buffers, &summary);
            // The unmutated sample is binned: the model run is a real one. (Its frame is not
            // checked: with Linux's list end, Increment Semaphore then Flush, the model starts
            // rendering before the flush caps the tile lists.)
            if edits.len() < 3 && mode & 2 == 0 {
                assert_eq!(binned, 1, "the valid sample binned");
            }
        }
    }
    if let Ok(info) = validate_shader(&s.code) {
        assert!(info.instructions * INSTRUCTION_BYTES <= s.code.len());
    }
});

/// Run the accepted list on the emulated V3D (the watched memory asserts the bounds); the
/// binning jobs it finished.
fn run_on_model(list: &[u8], buffers: &[Buffer<'_>], summary: &ListSummary) -> u32 {
    let mut contents: Vec<(u64, &[u8])> =
        buffers.iter().filter_map(|b| Some((b.base.0, b.contents?))).collect();
    contents.push((model::BIN_LIST, list));
    let render = model::rendering_list(summary);
    contents.push((model::RENDER_LIST, &render));
    let readable: Vec<(u64, u64)> = buffers
        .iter()
        .map(|b| (b.base.0, u64::from(b.size)))
        .chain([
            (model::BIN_LIST, list.len() as u64),
            (model::RENDER_LIST, render.len() as u64),
            model::frame(summary),
        ])
        .collect();
    let writable: Vec<(u64, u64)> = buffers
        .iter()
        .filter(|b| {
            b.purposes.contains(baregpu_vc4_validate::Purposes::TILE_ALLOCATION)
                || b.purposes.contains(baregpu_vc4_validate::Purposes::TILE_STATE)
        })
        .map(|b| (b.base.0, u64::from(b.size)))
        .chain([model::frame(summary)])
        .collect();
    model::run(&contents, readable, writable, list.len() as u32, render.len() as u32)
}
