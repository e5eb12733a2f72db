//! The models this server can run: one line per model.

use gpu_device_model::GpuModel;

/// Parses a `--fault` list into the model's inject switches (`GpuModel::inject`), or says why
/// it cannot.
pub type FaultParser = fn(&str) -> Result<u32, String>;

/// A runnable model.
pub struct ModelEntry {
    /// Name given to `--model`.
    pub name: &'static str,
    /// One-line description for `--help`.
    pub about: &'static str,
    /// A fresh instance in its reset state.
    pub create: fn() -> Box<dyn GpuModel>,
    /// `--fault LIST` to the model's inject switches (`GpuModel::inject`), or why not; `None`:
    /// the model has no injectable faults.
    pub faults: Option<FaultParser>,
}

/// Every model, by name.
pub const MODELS: &[ModelEntry] = &[
    ModelEntry {
        name: "selftest",
        about: "harness self-test device (gpu_mailbox::selftest datasheet)",
        create: || Box::new(selftest_model::SelftestModel::new()),
        faults: None,
    },
    ModelEntry {
        name: "r5xx",
        about: "Radeon R520 (1002:7100) command processor (amd-r5xx-acceleration §5, §6, §11.1)",
        create: || Box::new(r5xx_model::R5xxModel::new()),
        faults: Some(|list| {
            list.parse::<r5xx_model::Faults>().map(|f| f.switches()).map_err(|e| e.to_string())
        }),
    },
    ModelEntry {
        name: "evergreen-cypress",
        about: "Radeon HD 5870 Cypress (1002:6898): CP, IH ring, CP DMA, compute shader core \
                (amd-evergreen-cayman-acceleration §3, §9)",
        create: || Box::new(evergreen_model::EvergreenModel::new(evergreen_model::Asic::Cypress)),
        faults: Some(evergreen_faults),
    },
    ModelEntry {
        name: "evergreen-cayman",
        about: "Radeon HD 6970 Cayman (1002:6718): CP, IH ring, CP DMA, compute shader core \
                (amd-evergreen-cayman-acceleration §3, §4, §9)",
        create: || Box::new(evergreen_model::EvergreenModel::new(evergreen_model::Asic::Cayman)),
        faults: Some(evergreen_faults),
    },
    ModelEntry {
        name: "v3d",
        about: "VideoCore IV V3D behind the project-defined PCI wrapper (1234:3d04): control \
                lists, binner, renderer, QPUs, user programs (broadcom-videocore-iv-3d §3-§10)",
        create: || {
            Box::new(gpu_device_model::PlatformDevice::new(
                v3d_model::V3d::new(),
                gpu_mailbox::platform::DEVICE_V3D,
            ))
        },
        faults: Some(|list| {
            list.parse::<v3d_model::Faults>().map(|f| f.switches()).map_err(|e| e.to_string())
        }),
    },
    ModelEntry {
        name: "gt215",
        about: "nVidia GeForce GT 240, GT215 (10de:0ca3): PMC, PTIMER, PFIFO with DMA and IB \
                pushers, the falcons PCOPY and PDAEMON (nvidia-hardware-envytools §2.4-§2.10)",
        create: || Box::new(gt215_model::Gt215::new()),
        faults: Some(|list| {
            list.parse::<gt215_model::Faults>().map(|f| f.switches()).map_err(|e| e.to_string())
        }),
    },
];

fn evergreen_faults(list: &str) -> Result<u32, String> {
    list.parse::<evergreen_model::Faults>().map(|f| f.switches()).map_err(|e| e.to_string())
}

/// The entry called `name`.
pub fn find(name: &str) -> Option<&'static ModelEntry> {
    MODELS.iter().find(|m| m.name == name)
}

/// The known names, comma-separated.
pub fn names() -> String {
    MODELS.iter().map(|m| m.name).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_models_have_valid_identities() {
        for (i, m) in MODELS.iter().enumerate() {
            assert!(MODELS[i + 1..].iter().all(|o| o.name != m.name), "duplicate {}", m.name);
            assert_eq!((m.create)().pci_identity().validate(), Ok(()), "{}", m.name);
        }
        assert!(find("selftest").is_some());
        assert!(find("r5xx").is_some());
        let cayman = find("evergreen-cayman").unwrap();
        assert_eq!((cayman.create)().pci_identity().device, 0x6718);
        assert_eq!((find("evergreen-cypress").unwrap().create)().pci_identity().device, 0x6898);
        let parse = cayman.faults.unwrap();
        assert_eq!(
            parse("slow=3"),
            Ok(gpu_mailbox::evergreen_faults::SLOW
                | 3 << gpu_mailbox::evergreen_faults::SLOW_TICKS_SHIFT)
        );
        assert!(parse("melt").is_err());
        let v3d = find("v3d").unwrap();
        let identity = (v3d.create)().pci_identity();
        assert_eq!((identity.vendor, identity.device), (0x1234, 0x3D04));
        let parse = v3d.faults.unwrap();
        assert_eq!(
            parse("outomem-storm,missed-irq"),
            Ok(v3d_model::faults::OUTOMEM_STORM | v3d_model::faults::MISSED_IRQ)
        );
        assert_eq!(parse("cp-stall"), Ok(gpu_mailbox::gpu_faults::CP_STALL));
        assert!(parse("ucode-corrupt").is_err(), "the V3D has no microcode");
        let gt215 = find("gt215").unwrap();
        let identity = (gt215.create)().pci_identity();
        assert_eq!((identity.vendor, identity.device), (0x10de, 0x0ca3));
        let parse = gt215.faults.unwrap();
        assert_eq!(
            parse("cp-stall,slow=5"),
            Ok(gpu_mailbox::gt215_faults::CP_STALL
                | gpu_mailbox::gt215_faults::SLOW
                | 5 << gpu_mailbox::gt215_faults::SLOW_TICKS_SHIFT)
        );
        assert_eq!(parse("device-gone"), Ok(gpu_mailbox::gt215_faults::ALL_ONES));
        assert!(parse("outomem-storm").is_err(), "a V3D fault, not a GT215 one");
        assert!(find("nope").is_none());
        assert_eq!(names(), "selftest, r5xx, evergreen-cypress, evergreen-cayman, v3d, gt215");
    }
}
