//! Bring-up: probe, the register test, both control list threads stopped, counters and the
//! user program queue cleared, interrupts off, caches cleared; the user VPM reservation.

use baregpu_gpu::liveness::{Unfinished, poll_healthy};
use baregpu_gpu::{Stats, Timeline};
use baregpu_hal::time::Clock;
use baregpu_hal::{RegisterIo, RegisterIoExt};
use baregpu_regs::vc4::v3d::{
    V3D_BFC, V3D_CT0CS, V3D_CT1CS, V3D_L2CACTL, V3D_PCS, V3D_RFC, V3D_SCRATCH, V3D_SLCACTL,
    V3D_SRQCS, V3D_VPMBASE,
};

use super::fences::{Counters, FenceTable};
use super::submit::Staged;
use super::{V3d, V3dConfig, check_alive};
use crate::Bar;
use crate::error::InitError;
use crate::identity::{Identity, probe};
use crate::pool::OverflowPool;

/// Bytes per `V3D_VPMBASE.VPMURSV` unit (Table 69: "multiples of 256 bytes").
pub const VPM_RESERVE_UNIT_BYTES: u32 = 256;

/// The values the register test writes to `V3D_SCRATCH` (Table 78): alternating bits, then
/// their complement.
const SCRATCH_PATTERNS: [u32; 2] = [0x5a5a_a5a5, 0xa5a5_5a5a];

impl<'p, IO: RegisterIo, C: Clock> V3d<'p, IO, C> {
    /// Probe the V3D at `io` and bring it up: the identity registers decoded (a missing,
    /// powered-off or wrong device is an [`InitError`] before any write), `V3D_SCRATCH`
    /// written and read back, both control list threads stopped (`CTRSTA`), the flush and
    /// frame counters and the user program queue cleared, every interrupt disabled and
    /// acknowledged, the L2 and slice caches cleared. `pool` is the binner's overflow memory
    /// (`None`: a job that outgrows its tile allocation memory stalls and its wait reports
    /// [`WaitError::OverflowPoolExhausted`](crate::WaitError::OverflowPoolExhausted)).
    pub fn init(
        io: IO,
        clock: C,
        pool: Option<OverflowPool<'p>>,
        config: V3dConfig,
    ) -> Result<Self, InitError> {
        let io = Bar::new(io);
        let identity = probe(&io)?;
        let v3d = V3d {
            io,
            clock,
            identity,
            config,
            pool,
            pool_exhausted: core::cell::Cell::new(false),
            timeline: Timeline::new(),
            counters: Counters::default(),
            fences: FenceTable::default(),
            staged: Staged::default(),
            interrupts: false,
            stats: Stats::default(),
        };
        v3d.register_test()?;
        v3d.quiesce();
        v3d.disable_interrupts();
        v3d.clear_caches();
        Ok(v3d)
    }

    /// Write and read back `V3D_SCRATCH`: the register window reaches a live V3D.
    pub fn register_test(&self) -> Result<(), InitError> {
        for expected in SCRATCH_PATTERNS {
            self.io.write(V3D_SCRATCH::RESET.with_scratch(expected));
            let found = self.io.read::<V3D_SCRATCH>().raw();
            if found != expected {
                check_alive(&self.io)?;
                return Err(InitError::ScratchMismatch { expected, found });
            }
        }
        Ok(())
    }

    /// Both control list threads stopped and reset (`CTnCS.CTRSTA`, Table 49), the flush and
    /// frame counters cleared (writing 1, Tables 56-57), the user program queue emptied and
    /// its counters and error cleared (Table 68; hello_fft gpu_fft_base.c writes the same
    /// bits), the overflow block withdrawn (`BPOA`, then `BPOS` = 0). Then the driver's
    /// counters start from zero again.
    pub(crate) fn quiesce(&self) {
        self.io.write(V3D_CT0CS::RESET.with_ctrsta(true));
        self.io.write(V3D_CT1CS::RESET.with_ctrsta(true));
        self.io.write(V3D_BFC::RESET.with_bmfct(1));
        self.io.write(V3D_RFC::RESET.with_rmfct(1));
        self.io.write(
            V3D_SRQCS::RESET.with_qpurql(1).with_qpurqerr(true).with_qpurqcm(1).with_qpurqcc(1),
        );
        self.withdraw_overflow();
        self.counters.restart();
    }

    /// Clear the L2 cache (`V3D_L2CACTL.L2CCLR`, Table 71) and, on every slice, the
    /// instruction, uniforms and both TMU caches (`V3D_SLCACTL`, Table 72): before each
    /// submission, as Linux vc4_gem.c does, so the V3D reads what the CPU wrote.
    pub(crate) fn clear_caches(&self) {
        self.io.write(V3D_L2CACTL::RESET.with_l2cclr(true));
        let slices = self.identity.slice_mask();
        self.io.write(
            V3D_SLCACTL::RESET
                .with_iccs(slices)
                .with_uccs(slices)
                .with_t0ccs(slices)
                .with_t1ccs(slices),
        );
    }

    /// Reserve `bytes` of VPM for user programs (`V3D_VPMBASE`, Table 69, in 256-byte units,
    /// rounded up). The document allows the write only while the V3D is idle: the driver
    /// waits (bounded) for both pipelines and the user program queue to empty.
    pub fn reserve_user_vpm(&mut self, bytes: u32) -> Result<(), InitError> {
        let units = bytes.div_ceil(VPM_RESERVE_UNIT_BYTES);
        let max_units = (1 << V3D_VPMBASE::VPMURSV.width) - 1;
        if units > max_units || bytes > self.identity.vpm_bytes {
            return Err(InitError::VpmTooLarge { bytes });
        }
        self.wait_idle()?;
        self.io.write(V3D_VPMBASE::RESET.with_vpmursv(units as u8));
        Ok(())
    }

    /// Wait (bounded by `idle_timeout`) until neither pipeline is active (`V3D_PCS`, Table
    /// 55) and no user program is queued (`V3D_SRQCS.QPURQL`, Table 68).
    pub fn wait_idle(&self) -> Result<(), InitError> {
        let io = &self.io;
        poll_healthy(
            &self.clock,
            self.config.idle_timeout,
            || {
                let pcs = io.read::<V3D_PCS>();
                let srq = io.read::<V3D_SRQCS>();
                let busy = pcs.bmactive() || pcs.rmactive() || srq.qpurql() != 0;
                (!busy).then_some(())
            },
            || check_alive(io).err(),
        )
        .map_err(|e| match e {
            Unfinished::Unhealthy(gone) => InitError::DeviceGone(gone),
            Unfinished::TimedOut(t) => InitError::NotIdle(t),
        })
    }

    /// The probed identity (for a caller that probes before `init`).
    pub fn probe(io: &Bar<IO>) -> Result<Identity, crate::error::ProbeError> {
        probe(io)
    }
}
