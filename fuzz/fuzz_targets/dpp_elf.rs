//! The DPP executable (ELF) loader: any bytes are refused with a typed error or parsed into an
//! executable whose every accessor works (instructions, index lists, program info); never a
//! panic or an out-of-bounds read.
#![no_main]

use baregpu_ati_ctm::DppExecutable;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(exe) = DppExecutable::parse(bytes) {
        assert_eq!(exe.instructions().count() as u32, exe.instruction_count());
        assert_eq!(exe.instruction_words().count(), exe.instructions().count() * 6);
        let _ = exe.text().len() + exe.text_vaddr() as usize;
        let _ = exe.program_info();
        for list in [exe.inputs(), exe.outputs(), exe.float32_constants(), exe.int32_constants()] {
            for index in list {
                assert!(list.contains(index));
            }
        }
        let _ = (exe.writes_cond_output(), exe.has_early_exit());
    }
});
