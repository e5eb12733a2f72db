//! One dependency is enough to use the driver: everything its API names (the HAL traits, the
//! Evergreen registers and chipsets, the ring's packet errors, the firmware types, the
//! assembler's kernels) is reached here through `baregpu_radeon_evergreen`'s re-exports only.
//! The device side is the emulated Cypress and Cayman.

use baregpu_radeon_evergreen::gpu::GpuQueue;
use std::time::Duration;

use baregpu_radeon_evergreen::hal::RegisterIoExt;
use baregpu_radeon_evergreen::hal::dma::{DmaAllocator, DmaLayout};
use baregpu_radeon_evergreen::hal::error::Chain;
use baregpu_radeon_evergreen::regs::{Chipset, cp::CP_ME_CNTL};
use baregpu_radeon_evergreen::{
    Evergreen, EvergreenFirmware, EvergreenUcode, FENCE_DWORDS, FirmwareError, Image, ImageError,
    Overrun, RingConfig, ScratchError, UploadReport, asm, compute, pci, pm4,
};
use evergreen_model::{Asic, EvergreenModel};
use gpu_device_model::{InProcess, ModelClock};

fn read(file: &str) -> Vec<u8> {
    let path = format!("/lib/firmware/{file}");
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!("{path}: {e}; install it with `bash scripts/setup.sh` (firmware-amd-graphics)")
    })
}

#[test]
fn a_kernel_drives_cypress_and_cayman_naming_only_the_driver_crate() {
    for (asic, chip) in [(Asic::Cypress, Chipset::CYPRESS), (Asic::Cayman, Chipset::CAYMAN)] {
        let gpu = InProcess::new(EvergreenModel::new(asic)).expect("in-process Evergreen");

        // Probe and enable through configuration space.
        let probed = pci::probe(&gpu, gpu.pci_address()).expect("a supported chip");
        assert_eq!(probed.chip, chip);
        let command = pci::enable(&gpu, gpu.pci_address()).expect("an endpoint");
        assert_eq!(command & 0b110, 0b110, "{chip:?}: memory decoding and bus mastering");

        // The firmware of the probed chip, parsed with the re-exported firmware types; a short
        // image is refused before any register access, naming the image.
        let ucode = EvergreenUcode::of(probed.chip).expect("microcode of a listed chip");
        let [pfp, me, rlc] = [ucode.pfp_file(), ucode.me_file(), ucode.rlc_file()].map(read);
        let short = EvergreenFirmware::parse(ucode, &pfp, &me, &rlc[4..]).unwrap_err();
        assert_eq!(
            short,
            ImageError::new(
                Image::Rlc,
                FirmwareError::WrongSize { expected: 4 * ucode.rlc_dwords(), found: rlc.len() - 4 }
            )
        );
        let fw = EvergreenFirmware::parse(ucode, &pfp, &me, &rlc).expect("valid images");

        let mut drv = Evergreen::init(
            &gpu,
            ModelClock::new(&gpu),
            &gpu,
            probed.chip,
            &fw,
            RingConfig::with_ring_bytes(4096),
        )
        .expect("init");
        let report: UploadReport = drv.upload_report();
        assert_eq!(report.pfp_writes, 1 + ucode.pfp_dwords(), "{chip:?}: every PFP word");

        // Typed registers through the re-exported HAL trait and register module.
        let me_cntl = gpu.read::<CP_ME_CNTL>();
        assert!(!me_cntl.me_halt() && !me_cntl.pfp_halt(), "{chip:?}: engines running");

        // A CP DMA fill and a fence, checked by the CPU.
        let dst = gpu.allocate(DmaLayout::new(4096, 256).expect("layout")).expect("DMA memory");
        dst.zero();
        let fence = drv
            .submit(6 + FENCE_DWORDS, |s| {
                s.cp_dma_fill(0xC0FF_EE00, dst.bus_address(), 4096)?;
                s.fence()
            })
            .expect("submit");
        drv.wait(&fence, Duration::from_millis(200)).expect("fence signalled");
        let mut words = [0u32; 1024];
        dst.read_slice(0, &mut words).expect("in bounds");
        assert!(words.iter().all(|&w| w == 0xC0FF_EE00), "{chip:?}: the CP filled the page");

        // A packet larger than its reservation: refused whole, the submission discarded, the
        // overrun the source.
        let err = drv.submit(2, |s| s.packet(pm4::opcode::NOP, &[0; 2048])).unwrap_err();
        let overrun = core::error::Error::source(&err).and_then(|e| e.downcast_ref::<Overrun>());
        assert_eq!(overrun, Some(&Overrun { reserved: 2, attempted: 2049 }), "{chip:?}: {err:?}");
        // Each level printed once.
        let chain = Chain(&err).to_string();
        assert_eq!(chain.matches("reservation").count(), 1, "{chain}");
        // Nothing of it stayed behind: the next fence fits and signals.
        let next = drv.fence().expect("a fence after the refused packet");
        drv.wait(&next, Duration::from_millis(200)).expect("signalled");

        assert!(matches!(drv.scratch(8), Err(ScratchError::NoSuchRegister(_))));

        // The assembler's kernels, loaded for the compute module.
        let asm_chip = match chip {
            Chipset::CYPRESS => asm::Chip::Evergreen,
            Chipset::CAYMAN => asm::Chip::Cayman,
            other => panic!("no assembler target for {other:?}"),
        };
        let (mut nodes, mut code) = ([asm::Node::EMPTY; 64], [0u32; 256]);
        let info = asm::assemble(asm::examples::VECTOR_ADD, asm_chip, &mut nodes, &mut code)
            .expect("assembles");
        let region = gpu.allocate(DmaLayout::new(4096, 256).expect("layout")).expect("DMA memory");
        let kernel =
            compute::load_kernel(&region, &code[..info.words], info.num_gprs, info.stack_depth)
                .expect("kernel");
        assert_eq!(kernel.code, region.bus_address());
        assert_eq!(gpu.error_code(), 0, "{chip:?}: device error state");
    }
}
