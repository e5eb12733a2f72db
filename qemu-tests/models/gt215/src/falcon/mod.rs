//! The v3 falcon microprocessor of GT215's PCOPY and PDAEMON (nvidia-hardware-envytools
//! §2.10): its host window (the IO space of §2.10.10 as the host sees it), code and data
//! segments with the §2.10.7 code TLB, interrupts (§2.10.8), xfers (§2.10.9), and the core
//! executing the ISA with this module's own decoder ([`exec`](self) — never an assembler's
//! tables).
//!
//! Work per tick is bounded: one queued xfer (at most 0x100 bytes) and at most
//! [`INSNS_PER_TICK`] instructions per engine.

mod exec;

use baregpu_hal::register::{Instance, Register, RegisterSpec};
use baregpu_regs::nvidia::{Chipset, REGISTERS, falcon as f};
use gpu_device_model::cp_error;
use gpu_device_model::regfile::RegisterFile;
use gpu_device_model::{Activity, DeviceContext};
use std::collections::VecDeque;
use std::sync::OnceLock;

/// Instructions one falcon executes per engine tick at most: the core's share of a tick,
/// small so a guest program (an infinite loop included) never runs long inside one tick.
pub const INSNS_PER_TICK: u32 = 64;

/// The falcon engines of GT215 this model emulates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Engine {
    /// The copy engine at BAR0 0x104000 (§2.10.1: "PCOPY[0] [GT215:GK104]").
    Pcopy,
    /// The daemon engine at BAR0 0x10a000 (§2.5.2 "falcon parameters").
    Pdaemon,
}

impl Engine {
    /// BAR0 offset of the engine's host window.
    pub const fn base(self) -> u32 {
        match self {
            Engine::Pcopy => <f::Pcopy0 as Instance>::BASE as u32,
            Engine::Pdaemon => <f::Pdaemon as Instance>::BASE as u32,
        }
    }

    /// Code segment bytes. PDAEMON: §2.5.2 "Code segment size: v0: 0x4000" (v0 = GT215).
    /// PCOPY: the document gives no parameters; 0x1000 as envytools hwdocs' PCOPY page lists.
    pub const fn code_size(self) -> usize {
        match self {
            Engine::Pcopy => 0x1000,
            Engine::Pdaemon => 0x4000,
        }
    }

    /// Data segment bytes. PDAEMON: §2.5.2 "Data segment size: v0: 0x3000"; PCOPY 0x800
    /// (envytools hwdocs).
    pub const fn data_size(self) -> usize {
        match self {
            Engine::Pcopy => 0x800,
            Engine::Pdaemon => 0x3000,
        }
    }

    /// DATA_INDEX/DATA port pairs (§2.10.4: "equal to 4 on PDAEMON, 1 on other engines").
    pub const fn data_ports(self) -> u32 {
        match self {
            Engine::Pcopy => 1,
            Engine::Pdaemon => 4,
        }
    }

    /// Bits of the virtual code page index (§2.5.2 "Code TLB index bits: v0-v2: 8"; the same
    /// for PCOPY, a decision).
    const fn vm_bits(self) -> u32 {
        8
    }

    /// Xfer queue slots (§2.5.2 "Xfer slots: v0-v2: 8"; the same for PCOPY, a decision).
    const fn xfer_slots(self) -> usize {
        8
    }

    /// `UC_CAPS`: code pages in bits 0-8 (§2.10.7), data size >> 8 in bits 9-16 (§2.10.4).
    pub const fn uc_caps(self) -> u32 {
        (self.code_size() >> 8) as u32 | ((self.data_size() >> 8) as u32) << 9
    }

    /// `UC_CAPS2`: the falcon version (3) in bits 0-3 (envytools rnndb falcon.xml) and the
    /// virtual code page index bits in bits 16-19 (§2.10.7).
    pub const fn uc_caps2(self) -> u32 {
        3 | self.vm_bits() << 16
    }
}

/// Execution state (§2.10.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// No instructions execute; interrupts are ignored.
    Stopped,
    /// Executing.
    Running,
    /// Waiting for an interrupt (`sleep`).
    Sleeping,
}

/// Trap reasons (§2.10.8, `$tstatus` bits 20-23).
pub mod trap {
    /// Software trap `trap 0`; `trap N` is `SOFTWARE + N`.
    pub const SOFTWARE: u32 = 0;
    /// Invalid opcode.
    pub const INVALID_OPCODE: u32 = 8;
    /// Code fetch from a virtual page no TLB maps.
    pub const VM_NO_HIT: u32 = 0xa;
    /// Code fetch from a virtual page more than one TLB maps.
    pub const VM_MULTI_HIT: u32 = 0xb;
}

/// Entries of the method FIFO from PFIFO (§2.5.2 "Fifo size: v0-v1: 0x10"; the same for
/// PCOPY, a decision).
pub const METHOD_FIFO_DEPTH: usize = 0x10;

/// Interrupt lines (§2.10.8).
pub mod line {
    /// FIFO: method data available (level-triggered).
    pub const FIFO: u32 = 2;
    /// EXIT: the processor stopped.
    pub const EXIT: u32 = 4;
    /// The first of the two software (SCRATCH / "SWGEN") lines, 6 and 7.
    pub const SWGEN0: u32 = 6;
}

/// A code TLB cell (§2.10.7): flags bit 0 usable, 1 busy, 2 secret.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Tlb {
    virt: u32,
    flags: u32,
}

const TLB_USABLE: u32 = 1;
const TLB_BUSY: u32 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum XferKind {
    CodeLoad,
    DataLoad,
    DataStore,
}

/// A queued xfer (§2.10.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Xfer {
    kind: XferKind,
    /// External bus address: (ext_base << 8) + ext_offset.
    external: u64,
    /// Code: physical page address; data: data segment address.
    local: u32,
    bytes: u32,
    /// Code loads: the virtual page the physical page is mapped at (ext_offset >> 8).
    virt: u32,
}

/// What one tick of a falcon did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// Instructions executed (at most [`INSNS_PER_TICK`]).
    pub insns: u32,
    /// Whether the engine has more work.
    pub activity: Activity,
}

/// Registers of the v4+/v5+, crypto and UAS units: not on GT215's v3 falcons (Table 18
/// "Present on").
fn on_v3(spec: &RegisterSpec<Chipset>) -> bool {
    ![
        f::FIFO_DATA_WR::NAME,
        f::PM_SEL::NAME,
        f::HOST_IO_INDEX_V4::NAME,
        f::CX_STATUS::NAME,
        f::UC_CTRL_ALIAS::NAME,
        f::BRANCH_HISTORY_CTRL::NAME,
        f::BRANCH_HISTORY_PC::NAME,
        f::UAS_IO_WINDOW::NAME,
        f::UAS_CONFIG::NAME,
        f::UAS_FAULT_ADDR::NAME,
        f::UAS_FAULT_STATUS::NAME,
    ]
    .contains(&spec.name)
}

/// The host window of `engine` as absolute specs at window offsets: the common falcon block,
/// and for PDAEMON its own registers (§2.5.2, host 0x400 and up).
fn window_specs(engine: Engine) -> &'static [RegisterSpec<Chipset>] {
    static PCOPY: OnceLock<Vec<RegisterSpec<Chipset>>> = OnceLock::new();
    static PDAEMON: OnceLock<Vec<RegisterSpec<Chipset>>> = OnceLock::new();
    let build = || {
        REGISTERS
            .iter()
            .filter_map(|s| match s.block {
                "FALCON" if on_v3(s) => Some(RegisterSpec { relative: false, ..*s }),
                "PDAEMON" if engine == Engine::Pdaemon && s.chipsets.contains(Chipset::GT215) => {
                    let offset = s.offset.checked_sub(Engine::Pdaemon.base() as usize)?;
                    Some(RegisterSpec { offset, ..*s })
                }
                _ => None,
            })
            .collect()
    };
    match engine {
        Engine::Pcopy => PCOPY.get_or_init(build),
        Engine::Pdaemon => PDAEMON.get_or_init(build),
    }
}

const fn off<R: Register>() -> u32 {
    R::OFFSET as u32
}

const INTR_SET: u32 = off::<f::INTR_SET>();
const INTR_CLEAR: u32 = off::<f::INTR_CLEAR>();
const INTR: u32 = off::<f::INTR>();
const INTR_MODE: u32 = off::<f::INTR_MODE>();
const INTR_EN_SET: u32 = off::<f::INTR_EN_SET>();
const INTR_EN_CLEAR: u32 = off::<f::INTR_EN_CLEAR>();
const INTR_EN: u32 = off::<f::INTR_EN>();
const INTR_ROUTING: u32 = off::<f::INTR_ROUTING>();
const TIME_LOW: u32 = off::<f::TIME_LOW>();
const TIME_HIGH: u32 = off::<f::TIME_HIGH>();
const STATUS: u32 = off::<f::STATUS>();
const UC_CTRL: u32 = off::<f::UC_CTRL>();
const UC_ENTRY: u32 = off::<f::UC_ENTRY>();
const UC_CAPS: u32 = off::<f::UC_CAPS>();
const UC_CAPS2: u32 = off::<f::UC_CAPS2>();
const XFER_EXT_BASE: u32 = off::<f::XFER_EXT_BASE>();
const XFER_LOCAL_ADDRESS: u32 = off::<f::XFER_LOCAL_ADDRESS>();
const XFER_CTRL: u32 = off::<f::XFER_CTRL>();
const XFER_EXT_OFFSET: u32 = off::<f::XFER_EXT_OFFSET>();
const XFER_STATUS: u32 = off::<f::XFER_STATUS>();
const TLB_CMD: u32 = off::<f::TLB_CMD>();
const TLB_CMD_RES: u32 = off::<f::TLB_CMD_RES>();
const CODE_INDEX: u32 = off::<f::CODE_INDEX>();
const CODE: u32 = off::<f::CODE>();
const CODE_VIRT: u32 = off::<f::CODE_VIRT>();
const DATA_INDEX: u32 = off::<f::DATA_INDEX>();
const DATA: u32 = off::<f::DATA>();
/// Byte distance between DATA_INDEX/DATA port pairs (§2.10.4: "0x1c0 + i * 8").
const DATA_PORT_STRIDE: u32 = 8;
const FIFO_ENABLE: u32 = off::<f::FIFO_ENABLE>();
/// `FIFO_ENABLE` bit 1: the engine takes methods from PFIFO (envytools rnndb falcon.xml
/// ACCESS_EN; the database has the register without fields).
const FIFO_ACCESS_EN: u32 = 1 << 1;
const FIFO_DATA: u32 = off::<f::FIFO_DATA>();
const FIFO_CMD: u32 = off::<f::FIFO_CMD>();
const FIFO_OCCUPIED: u32 = off::<f::FIFO_OCCUPIED>();
const FIFO_ACK: u32 = off::<f::FIFO_ACK>();
const UC_SP: u32 = off::<f::UC_SP>();
const UC_PC: u32 = off::<f::UC_PC>();
/// First host-only offset (§2.10.10: "First 0xf00 bytes of this window are tied to the falcon
/// IO space, while last 0x100 bytes contain several host-only registers").
const HOST_ONLY: u32 = 0xf00;

/// `UC_CTRL` bit 5: sleeping (envytools rnndb falcon.xml; the database has START and HALTED).
const UC_CTRL_SLEEPING: u32 = 1 << 5;

/// `$flags` bits (§2.10.2).
mod flag {
    pub const C: u32 = 8;
    pub const O: u32 = 9;
    pub const S: u32 = 10;
    pub const Z: u32 = 11;
    pub const IE0: u32 = 16;
    pub const IS0: u32 = 20;
    pub const TA: u32 = 24;
}

/// One falcon engine.
pub struct Falcon {
    engine: Engine,
    regs: RegisterFile<Chipset>,
    imem: Vec<u8>,
    dmem: Vec<u8>,
    tlb: Vec<Tlb>,
    /// `$r0`-`$r15`.
    gpr: [u32; 16],
    /// Special registers `$sr0`-`$sr15` (§2.10.2); `$pc` and `$sp` are kept here too.
    sr: [u32; 16],
    state: State,
    /// Edge-triggered interrupt flip-flops (§2.10.8).
    intr: u32,
    intr_en: u32,
    xfers: VecDeque<Xfer>,
    /// A host XFER_CTRL write waiting for a free queue slot (XFER_CTRL bit 0).
    host_xfer: Option<Xfer>,
    tlb_cmd_res: u32,
    /// Methods PFIFO delivered: (FIFO_CMD, FIFO_DATA).
    methods: VecDeque<(u32, u32)>,
    /// Instructions executed since power-on.
    executed: u64,
}

/// Special register numbers (§2.10.2).
mod sr {
    pub const IV0: usize = 0;
    pub const TV: usize = 3;
    pub const SP: usize = 4;
    pub const PC: usize = 5;
    pub const XCBASE: usize = 6;
    pub const XDBASE: usize = 7;
    pub const FLAGS: usize = 8;
    pub const TSTATUS: usize = 12;
}

impl Falcon {
    /// A stopped falcon after reset.
    pub fn new(engine: Engine) -> Self {
        let mut regs = RegisterFile::new(window_specs(engine), 0x1000, |_| true, &[]);
        regs.set(UC_CAPS, engine.uc_caps());
        regs.set(UC_CAPS2, engine.uc_caps2());
        Falcon {
            engine,
            regs,
            imem: vec![0; engine.code_size()],
            dmem: vec![0; engine.data_size()],
            tlb: vec![Tlb::default(); engine.code_size() >> 8],
            gpr: [0; 16],
            sr: [0; 16],
            state: State::Stopped,
            intr: 0,
            intr_en: 0,
            xfers: VecDeque::new(),
            host_xfer: None,
            tlb_cmd_res: 0,
            methods: VecDeque::new(),
            executed: 0,
        }
    }

    /// Back to the reset state (PMC.ENABLE cleared, function-level reset).
    pub fn reset(&mut self) {
        *self = Falcon::new(self.engine);
    }

    /// The engine.
    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// Execution state.
    pub fn state(&self) -> State {
        self.state
    }

    /// `$r0`-`$r15` (white-box inspection).
    pub fn gpr(&self) -> [u32; 16] {
        self.gpr
    }

    /// `$tstatus`: faulting `$pc` in bits 0-19, trap reason in bits 20-23 (§2.10.8).
    pub fn tstatus(&self) -> u32 {
        self.sr[sr::TSTATUS]
    }

    /// `$pc`.
    pub fn pc(&self) -> u32 {
        self.sr[sr::PC]
    }

    /// Instructions executed since reset.
    pub fn executed(&self) -> u64 {
        self.executed
    }

    /// Whether the engine has work: running, or xfers queued.
    pub fn busy(&self) -> bool {
        self.state == State::Running
            || !self.xfers.is_empty()
            || self.host_xfer.is_some()
            || (self.state == State::Sleeping && self.deliverable().is_some())
    }

    fn level_mask(&self) -> u32 {
        self.regs.stored(INTR_MODE) & 0xffff
    }

    /// INTR as read: the edge flip-flops, and the level lines wired to their sources (only
    /// FIFO has one in this model).
    fn intr_status(&self) -> u32 {
        let fifo = u32::from(!self.methods.is_empty()) << line::FIFO;
        (self.intr & !self.level_mask()) | (fifo & self.level_mask())
    }

    /// Whether the method FIFO takes a method now: PFIFO access enabled (`FIFO_ENABLE`
    /// bit 1, envytools rnndb falcon.xml ACCESS_EN) and room left; PFIFO's puller waits
    /// otherwise.
    pub fn method_fifo_free(&self) -> bool {
        self.regs.stored(FIFO_ENABLE) & FIFO_ACCESS_EN != 0
            && self.methods.len() < METHOD_FIFO_DEPTH
    }

    /// Whether every delivered method was acknowledged (the engine is idle for PFIFO).
    pub fn method_fifo_empty(&self) -> bool {
        self.methods.is_empty()
    }

    /// PFIFO delivers method `mthd` (byte address) of subchannel `subc` with `data`. §2.10.14
    /// is "Todo: write me"; envytools rnndb falcon.xml gives FIFO_CMD's layout: the method
    /// shifted right by 2 in bits 10:0, the subchannel in bits 13:11; FIFO_DATA holds the
    /// parameter.
    /// Returns false when the FIFO does not take it ([`method_fifo_free`](Self::method_fifo_free)).
    pub fn push_method(&mut self, subc: u32, mthd: u32, data: u32) -> bool {
        if !self.method_fifo_free() {
            return false;
        }
        self.methods.push_back(((mthd >> 2) & 0x7ff | (subc & 7) << 11, data));
        true
    }

    fn route(&self, line: u32) -> u32 {
        let routing = self.regs.stored(INTR_ROUTING);
        (routing >> line & 1) | (routing >> (16 + line) & 1) << 1
    }

    fn pending_routed(&self, destination: u32) -> bool {
        let pending = self.intr_status() & self.intr_en;
        (0..16).any(|l| pending >> l & 1 != 0 && self.route(l) == destination)
    }

    /// Whether the engine's PMC interrupt input is active: a pending, enabled line routed to
    /// PMC (§2.10.8 "Interrupt routing": selector 1).
    pub fn pmc_line(&self) -> bool {
        self.pending_routed(1)
    }

    /// Raise edge line `line` (the EXIT interrupt, INTR_SET).
    fn raise(&mut self, line: u32) {
        if self.level_mask() >> line & 1 == 0 {
            self.intr |= 1 << line;
        }
    }

    /// Stop: `exit`, a double trap, an xfer fault (§2.10.6 "The EXIT interrupt").
    fn halt(&mut self) {
        self.state = State::Stopped;
        self.raise(line::EXIT);
    }

    /// A host read of window offset `offset` (also the falcon's `iord`); `time` is PTIMER's.
    pub fn host_read(&mut self, offset: u32, time: u64) -> u32 {
        match offset {
            INTR => self.intr_status(),
            INTR_EN => self.intr_en,
            TIME_LOW => time as u32,
            TIME_HIGH => (time >> 32) as u32,
            STATUS => u32::from(self.state == State::Running),
            UC_CTRL => match self.state {
                State::Stopped => f::UC_CTRL::HALTED.set(0, 1),
                State::Sleeping => UC_CTRL_SLEEPING,
                State::Running => 0,
            },
            CODE => {
                let index = self.regs.stored(CODE_INDEX);
                let value = self.code_word(index & 0xfffc);
                if f::CODE_INDEX::READ_AUTOINCREMENT.get(index) != 0 {
                    self.regs.set(CODE_INDEX, next_index(index));
                }
                value
            }
            XFER_CTRL => self.regs.read(XFER_CTRL) | u32::from(self.host_xfer.is_some()),
            XFER_STATUS => self.xfer_status(),
            TLB_CMD_RES => self.tlb_cmd_res,
            FIFO_DATA => self.methods.front().map_or(0, |m| m.1),
            FIFO_CMD => self.methods.front().map_or(0, |m| m.0),
            FIFO_OCCUPIED => self.methods.len() as u32,
            UC_SP => self.sr[sr::SP],
            UC_PC => self.sr[sr::PC],
            _ => match self.data_port(offset) {
                Some((port, true)) => {
                    let index_reg = DATA_INDEX + port * DATA_PORT_STRIDE;
                    let index = self.regs.stored(index_reg);
                    let value = self.ld(32, index & 0xfffc);
                    if f::DATA_INDEX::READ_AUTOINCREMENT.get(index) != 0 {
                        self.regs.set(index_reg, next_index(index));
                    }
                    value
                }
                Some((_, false)) => self.regs.read(offset),
                None if self.is_data_port_offset(offset) => 0,
                None => self.regs.read(offset),
            },
        }
    }

    /// A host write of window offset `offset` (also the falcon's `iowr`). Returns whether the
    /// write did anything (false: a hole, a read-only register, a missing port).
    pub fn host_write(&mut self, offset: u32, value: u32) -> bool {
        match offset {
            INTR_SET => self.intr |= value & 0xffff & !self.level_mask(),
            INTR_CLEAR => self.intr &= !(value & !self.level_mask()),
            INTR_EN_SET => self.intr_en |= value & 0xffff,
            INTR_EN_CLEAR => self.intr_en &= !value,
            UC_CTRL => {
                if f::UC_CTRL::START.get(value) != 0 && self.state == State::Stopped {
                    self.sr[sr::PC] = self.regs.stored(UC_ENTRY) & 0xffff;
                    self.state = State::Running;
                }
            }
            CODE => {
                let index = self.regs.stored(CODE_INDEX);
                self.code_store(index & 0xfffc, value);
                if f::CODE_INDEX::WRITE_AUTOINCREMENT.get(index) != 0 {
                    self.regs.set(CODE_INDEX, next_index(index));
                }
            }
            XFER_CTRL => {
                self.regs.write(XFER_CTRL, value);
                if self.host_xfer.is_some() {
                    return false; // "XFER_CTRL shouldn't be written until this bit clears"
                }
                self.host_xfer = Some(self.host_xfer_request(value));
                self.admit_host_xfer();
            }
            FIFO_ACK => {
                self.methods.pop_front();
            }
            TLB_CMD => {
                self.regs.write(TLB_CMD, value);
                let param = f::TLB_CMD::PARAM.get(value);
                match f::TLB_CMD::CMD.get(value) {
                    1 => self.itlb(param),
                    2 => self.tlb_cmd_res = self.ptlb(param),
                    3 => self.tlb_cmd_res = self.vtlb(param),
                    _ => {}
                }
            }
            UC_CAPS | UC_CAPS2 | UC_SP | UC_PC | TIME_LOW | TIME_HIGH | STATUS | FIFO_DATA
            | FIFO_CMD | FIFO_OCCUPIED => return false,
            _ => match self.data_port(offset) {
                Some((port, true)) => {
                    let index_reg = DATA_INDEX + port * DATA_PORT_STRIDE;
                    let index = self.regs.stored(index_reg);
                    self.st(32, index & 0xfffc, value);
                    if f::DATA_INDEX::WRITE_AUTOINCREMENT.get(index) != 0 {
                        self.regs.set(index_reg, next_index(index));
                    }
                }
                None if self.is_data_port_offset(offset) => return false,
                _ => {
                    if !self.regs.accepts(offset) {
                        return false;
                    }
                    self.regs.write(offset, value);
                }
            },
        }
        true
    }

    fn is_data_port_offset(&self, offset: u32) -> bool {
        (DATA_INDEX..DATA_INDEX + 8 * DATA_PORT_STRIDE).contains(&offset)
    }

    /// The data port at `offset` if the engine has it: (port, whether it is the DATA word).
    fn data_port(&self, offset: u32) -> Option<(u32, bool)> {
        if !self.is_data_port_offset(offset) {
            return None;
        }
        let port = (offset - DATA_INDEX) / DATA_PORT_STRIDE;
        (port < self.engine.data_ports())
            .then_some((port, offset == DATA + port * DATA_PORT_STRIDE))
    }

    fn code_word(&self, address: u32) -> u32 {
        let a = address as usize;
        self.imem.get(a..a + 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// CST (§2.10.7) without the secret paths (GT215's PCOPY and PDAEMON are not secretful).
    fn code_store(&mut self, address: u32, value: u32) {
        let a = address as usize;
        let page = a >> 8;
        if page >= self.tlb.len() {
            return;
        }
        if address & 0xfc == 0 {
            let virt = self.regs.stored(CODE_VIRT) & ((1 << self.engine.vm_bits()) - 1);
            self.tlb[page] = Tlb { virt, flags: TLB_BUSY };
        }
        self.imem[a..a + 4].copy_from_slice(&value.to_le_bytes());
        if address & 0xfc == 0xfc {
            self.tlb[page].flags = TLB_USABLE;
        }
    }

    fn itlb(&mut self, phys: u32) {
        if let Some(t) = self.tlb.get_mut(phys as usize) {
            *t = Tlb::default();
        }
    }

    fn ptlb(&self, phys: u32) -> u32 {
        self.tlb.get(phys as usize).map_or(0, |t| t.flags << 24 | t.virt << 8)
    }

    /// VTLB (§2.10.7): physical page, flags ORed over the matches, multi-hit bit 30, no-hit
    /// bit 31.
    fn vtlb(&self, address: u32) -> u32 {
        let page = (address >> 8) & 0xffff;
        let mut res = 0;
        let mut matches = 0;
        for (phys, t) in self.tlb.iter().enumerate() {
            if t.flags != 0 && t.virt == page {
                matches += 1;
                res |= phys as u32 | t.flags << 24;
            }
        }
        if matches == 0 {
            res |= 1 << 31;
        }
        if matches > 1 {
            res |= 1 << 30;
        }
        res
    }

    /// The data segment index of `address`: bits above what spans the segment are ignored
    /// (§2.10.4 says so of `$sp`; the model applies it to every access), and an address past
    /// the end of a segment that is not a power of two reaches nothing.
    fn dmem_index(&self, address: u32) -> Option<usize> {
        let a = (address as usize) & (self.dmem.len().next_power_of_two() - 1);
        (a < self.dmem.len()).then_some(a)
    }

    /// LD (§2.10.4).
    fn ld(&self, size: u32, address: u32) -> u32 {
        let address = address & !(size / 8 - 1);
        (0..size / 8).fold(0, |v, i| {
            let byte = self.dmem_index(address + i).map_or(0, |a| self.dmem[a]);
            v | u32::from(byte) << (8 * i)
        })
    }

    /// ST (§2.10.4), including the datum botched by an unaligned access.
    fn st(&mut self, size: u32, address: u32, value: u32) {
        let value = match size {
            32 if address & 1 != 0 => (value & 0xff) << ((address & 3) * 8),
            32 if address & 2 != 0 => (value & 0xffff) << ((address & 3) * 8),
            16 if address & 1 != 0 => (value & 0xff) << 8,
            _ => value,
        };
        let address = address & !(size / 8 - 1);
        for i in 0..size / 8 {
            if let Some(a) = self.dmem_index(address + i) {
                self.dmem[a] = (value >> (8 * i)) as u8;
            }
        }
    }

    fn xfer_status(&self) -> u32 {
        let count = |k| self.xfers.iter().filter(|x| x.kind == k).count().min(7) as u32;
        let stores = count(XferKind::DataStore);
        let loads = count(XferKind::DataLoad);
        let mut v = f::XFER_STATUS::STORES_PENDING.set(0, stores);
        v = f::XFER_STATUS::LOADS_PENDING.set(v, loads);
        f::XFER_STATUS::BUSY.set(v, u32::from(stores + loads != 0))
    }

    fn host_xfer_request(&self, ctrl: u32) -> Xfer {
        let kind = match f::XFER_CTRL::MODE.get(ctrl) {
            0 => XferKind::DataLoad,
            1 => XferKind::CodeLoad,
            2 => XferKind::DataStore,
            // Mode 3 is not a documented mode: the model refuses it when it runs it.
            _ => XferKind::DataStore,
        };
        let reserved = f::XFER_CTRL::MODE.get(ctrl) == 3;
        let base = self.regs.stored(XFER_EXT_BASE);
        let offset = self.regs.stored(XFER_EXT_OFFSET);
        let local = self.regs.stored(XFER_LOCAL_ADDRESS);
        let size = if reserved { u32::MAX } else { f::XFER_CTRL::SIZE.get(ctrl) };
        Self::request(kind, base, offset, local, size)
    }

    /// An xfer request (§2.10.9): external address (base << 8) + offset; data xfers move
    /// 4 << size bytes, code xfers 0x100. `size` out of 0..=6 gives a 0-byte request the
    /// queue refuses.
    fn request(kind: XferKind, base: u32, offset: u32, local: u32, size: u32) -> Xfer {
        let bytes = match kind {
            XferKind::CodeLoad => 0x100,
            _ if size <= 6 => 4 << size,
            _ => 0,
        };
        let external = (u64::from(base) << 8).wrapping_add(u64::from(offset));
        Xfer { kind, external, local: local & 0xffff, bytes, virt: offset >> 8 }
    }

    fn admit_host_xfer(&mut self) {
        if self.xfers.len() < self.engine.xfer_slots()
            && let Some(x) = self.host_xfer.take()
        {
            self.queue(x);
        }
    }

    /// Queue an xfer; a code load marks its page busy at once (§2.10.7).
    fn queue(&mut self, x: Xfer) {
        if x.kind == XferKind::CodeLoad
            && let Some(t) = self.tlb.get_mut((x.local >> 8) as usize)
        {
            let virt = x.virt & ((1 << self.engine.vm_bits()) - 1);
            *t = Tlb { virt, flags: TLB_BUSY };
        }
        self.xfers.push_back(x);
    }

    /// Whether an xfer's sizes and alignment are what §2.10.9 allows: a data size of 0..=6,
    /// external offset and local address aligned to it, the local range inside the segment; a
    /// code load to a whole physical page.
    fn xfer_valid(&self, x: &Xfer) -> bool {
        let (segment, align) = match x.kind {
            XferKind::CodeLoad => (self.imem.len(), 0x100),
            _ => (self.dmem.len(), x.bytes),
        };
        x.bytes != 0
            && x.local.is_multiple_of(align)
            && (x.kind == XferKind::CodeLoad || x.external.is_multiple_of(u64::from(align)))
            && x.local as usize + x.bytes as usize <= segment
    }

    /// Run the oldest queued xfer. The external port selects nothing in this model: every
    /// port reaches guest memory (the document's memory interface section is "Todo").
    fn run_xfer(&mut self, dev: &mut DeviceContext<'_>, dma_fault: &mut bool) {
        let Some(x) = self.xfers.pop_front() else { return };
        self.admit_host_xfer();
        if !self.xfer_valid(&x) {
            self.halt();
            dev.fail(cp_error::BAD_CONFIGURATION);
            return;
        }
        let local = x.local as usize;
        let len = x.bytes as usize;
        let fault = match x.kind {
            XferKind::DataStore => {
                let data = self.dmem[local..local + len].to_vec();
                (x.external == 0 || dev.dma_write(x.external, &data).is_err())
                    .then_some(cp_error::DMA_WRITE_FAULT)
            }
            XferKind::DataLoad | XferKind::CodeLoad => {
                let mut buf = [0u8; 0x100];
                let injected = std::mem::take(dma_fault);
                if injected || x.external == 0 || dev.dma_read(x.external, &mut buf[..len]).is_err()
                {
                    Some(cp_error::DMA_FETCH_FAULT)
                } else {
                    if x.kind == XferKind::CodeLoad {
                        self.imem[local..local + len].copy_from_slice(&buf[..len]);
                        self.tlb[local >> 8].flags = TLB_USABLE;
                    } else {
                        self.dmem[local..local + len].copy_from_slice(&buf[..len]);
                    }
                    None
                }
            }
        };
        if let Some(code) = fault {
            // The memory interface's error reporting is undocumented (§2.10.15 "Todo"): the
            // engine stops and the device reports the fault.
            self.halt();
            dev.fail(code);
        }
    }

    /// One tick: one queued xfer, then up to [`INSNS_PER_TICK`] instructions.
    pub fn step(&mut self, dev: &mut DeviceContext<'_>, time: u64, dma_fault: &mut bool) -> Step {
        self.run_xfer(dev, dma_fault);
        let mut insns = 0;
        if self.state == State::Sleeping && self.take_interrupt() {
            self.state = State::Running;
        }
        while self.state == State::Running && insns < INSNS_PER_TICK && !dev.failed() {
            self.take_interrupt();
            match self.execute(time) {
                exec::Flow::Next => {
                    insns += 1;
                    self.executed += 1;
                }
                exec::Flow::Stall => break,
            }
        }
        // Queued xfers and a running core can go on right now (the device paces long runs,
        // see `gpu::YIELD_EVERY`); a sleeping or stopped core waits for the host.
        let activity = if !self.xfers.is_empty() || self.state == State::Running {
            Activity::Busy
        } else {
            Activity::Idle
        };
        Step { insns, activity }
    }

    /// Deliver a pending interrupt whose vector is enabled (§2.10.8 "Interrupt delivery").
    fn take_interrupt(&mut self) -> bool {
        let Some(vector) = self.deliverable() else { return false };
        let pc = self.sr[sr::PC];
        self.push(pc);
        self.save_ie();
        self.sr[sr::PC] = self.sr[sr::IV0 + vector] & 0xffff;
        true
    }

    /// The vector a pending, enabled interrupt would enter now (routing selector 0 is vector
    /// 0, selector 2 vector 1), if its `ieX` is set.
    fn deliverable(&self) -> Option<usize> {
        (0..2).find(|&vector| {
            let destination = if vector == 0 { 0 } else { 2 };
            self.flag(flag::IE0 + vector as u32) && self.pending_routed(destination)
        })
    }

    fn flag(&self, bit: u32) -> bool {
        self.sr[sr::FLAGS] >> bit & 1 != 0
    }

    fn set_flag(&mut self, bit: u32, on: bool) {
        let flags = &mut self.sr[sr::FLAGS];
        *flags = (*flags & !(1 << bit)) | u32::from(on) << bit;
    }

    /// isX = ieX, ieX = 0.
    fn save_ie(&mut self) {
        for x in 0..2 {
            let ie = self.flag(flag::IE0 + x);
            self.set_flag(flag::IS0 + x, ie);
            self.set_flag(flag::IE0 + x, false);
        }
    }

    fn push(&mut self, value: u32) {
        self.set_sp(self.sr[sr::SP].wrapping_sub(4));
        self.st(32, self.sr[sr::SP], value);
    }

    fn pop(&mut self) -> u32 {
        let v = self.ld(32, self.sr[sr::SP]);
        self.set_sp(self.sr[sr::SP].wrapping_add(4));
        v
    }

    /// `$sp` keeps its low 2 bits and the bits above the data segment at 0 (§2.10.4).
    fn set_sp(&mut self, value: u32) {
        self.sr[sr::SP] = value & (self.dmem.len().next_power_of_two() as u32 - 1) & !3;
    }

    /// TRAP (§2.10.8 "Trap delivery"): a second trap while one is active stops the processor.
    fn trap(&mut self, reason: u32) {
        if self.flag(flag::TA) {
            self.halt();
            return;
        }
        let pc = self.sr[sr::PC];
        self.push(pc);
        self.save_ie();
        self.set_flag(flag::TA, true);
        self.sr[sr::TSTATUS] = (pc & 0xf_ffff) | (reason & 0xf) << 20;
        self.sr[sr::PC] = self.sr[sr::TV] & 0xffff;
    }
}

/// The next value of an index register with auto-increment: the address (bits 2-15) plus 4.
fn next_index(index: u32) -> u32 {
    (index & !0xfffc) | ((index & 0xfffc) + 4) & 0xfffc
}
