//! Guest RAM for the mailbox fuzz targets (included with `#[path]`): a `VecMemory` of `RAM`
//! bytes that asserts every access the framework lets through stays inside it.

use gpu_device_model::{DmaFault, GuestMemory, VecMemory};

/// Guest RAM size of the mailbox targets.
pub const RAM: usize = 256 << 10;

/// Guest RAM that checks every access the framework lets through.
pub struct Watched(pub VecMemory);

impl Watched {
    /// `RAM` bytes of zeroed guest memory.
    pub fn new() -> Watched {
        Watched(VecMemory::new(RAM).expect("guest RAM"))
    }
}

impl GuestMemory for Watched {
    fn ram_size(&self) -> u64 {
        self.0.ram_size()
    }
    fn read(&self, address: u64, buf: &mut [u8]) -> Result<(), DmaFault> {
        let r = self.0.read(address, buf);
        assert!(r.is_err() || address + buf.len() as u64 <= RAM as u64, "read outside RAM");
        r
    }
    fn write(&mut self, address: u64, data: &[u8]) -> Result<(), DmaFault> {
        let r = self.0.write(address, data);
        assert!(r.is_err() || address + data.len() as u64 <= RAM as u64, "write outside RAM");
        r
    }
}
