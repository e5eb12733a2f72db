//! Firmware programs, as text and as loadable [`Image`]s: a mailbox echo, a DMEM checksum, an
//! xfer memcpy service and the copy-engine firmware that PCOPY runs (tests run each one on a
//! small interpreter of the §2.10 semantics and compare the results with the CPU's).
//!
//! IO addresses are the falcon-side ones of §2.10.10 ("Common IO register list"): SCRATCH0
//! `I[0x1000]`, SCRATCH1 `I[0x1100]`, SCRATCH2 `I[0x2000]`, SCRATCH3 `I[0x2100]` (host 0x040,
//! 0x044, 0x080, 0x084), the mailboxes the host polls; the method FIFO registers are listed at
//! [`copy_engine`].
//!
//! Both copying programs share one chunk loop ([`COPY_ENGINE`] and [`XFER_MEMCPY`] contain the
//! same text): each xfer moves the largest `4 << size` bytes (size 0-6, §2.10.9) to which the
//! source and destination addresses are both aligned and which the remaining length holds,
//! so any copy whose addresses and length are multiples of 4 is done in whole, aligned xfers.
//! A 40-bit address `hi:lo` is given to the xfer as `$xdbase = hi << 24 | lo >> 8` and the
//! external offset `lo & 0xff` (§2.10.9: the address is `(ext_base << 8) + ext_offset`).

use crate::assemble;

/// The largest [`Image`] code, in bytes (four 256-byte code pages).
pub const MAX_CODE: usize = 0x400;

/// An assembled program ready for upload: code for IMEM from address 0, initial DMEM contents
/// (none of these programs needs any) and the entry point for `UC_ENTRY`.
///
/// The code is not padded: code is uploaded in 0x100-byte pages (§2.10.7), so a loader pads
/// the last page.
#[derive(Clone, PartialEq, Eq)]
pub struct Image {
    code: [u8; MAX_CODE],
    len: usize,
    /// The entry point (IMEM address of the first instruction).
    pub entry: u32,
}

impl Image {
    /// Assembles one of this module's sources. They are constants assembled by the crate's
    /// tests, so a failure here is a bug in this crate, not a runtime condition.
    fn assemble(source: &str) -> Self {
        let mut code = [0u8; MAX_CODE];
        let len = match assemble(source, &mut code) {
            Ok(len) => len,
            Err(e) => panic!("a built-in falcon program does not assemble: {e}"),
        };
        Self { code, len, entry: 0 }
    }

    /// The code bytes, from IMEM address 0.
    pub fn code(&self) -> &[u8] {
        &self.code[..self.len]
    }

    /// Initial DMEM contents, from DMEM address 0 (empty: every program sets up its own data).
    pub fn data(&self) -> &[u8] {
        &[]
    }
}

impl core::fmt::Debug for Image {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Image")
            .field("code_len", &self.len)
            .field("entry", &self.entry)
            .finish_non_exhaustive()
    }
}

/// Mailbox echo: waits until the host writes a non-zero request to SCRATCH0, answers it plus
/// one in SCRATCH1, clears SCRATCH0 and halts (`exit`, §2.10.6).
pub const MAILBOX_ECHO: &str = "
    mov $r1, 0x1000          ; SCRATCH0 (§2.10.10)
wait:
    iord $r2, I[$r1 + 0]
    cmpu b32 $r2, 0
    bra e wait              ; nothing yet
    add b32 $r2, 1
    iowr I[$r1 + 0x100], $r2 ; SCRATCH1 = request + 1
    clear b32 $r3
    iowr I[$r1 + 0], $r3    ; SCRATCH0 = 0: request taken
    exit
";

/// DMEM checksum: the 32-bit wrapping sum of the words at `D[0]` .. `D[4 * n]`, `n` taken from
/// SCRATCH0, written to SCRATCH1; then `exit`. The host fills DMEM through the DATA port
/// (§2.10.4 "Accessing data segment through IO").
pub const DMEM_CHECKSUM: &str = "
    mov $r1, 0x1000
    iord $r2, I[$r1 + 0]     ; n: words to sum
    clear b32 $r3            ; sum
    clear b32 $r4            ; address
loop:
    cmpu b32 $r2, 0
    bra e done
    ld b32 $r5, D[$r4 + 0]
    add b32 $r3, $r5
    add b32 $r4, 4
    sub b32 $r2, 1
    bra loop
done:
    iowr I[$r1 + 0x100], $r3
    exit
";

/// The shared chunk loop (module docs): copies `$r8` bytes from `$r5:$r4` to `$r7:$r6`
/// (high:low) through DMEM `0x0`-`0xff`, then continues at `copied`; goes to `misaligned`
/// (copying nothing) when an address or the length is not a multiple of 4. Uses `$r0` = 0,
/// `$r1`, `$r2`, `$r9`, `$r14`, `$r15`.
macro_rules! copy_loop {
    () => {
        "
    or $r1, $r4, $r6
    or $r1, $r8
    and $r1, 3
    cmpu b32 $r1, 0
    bra ne misaligned        ; xfers move whole words (§2.10.9: 4 << size bytes)
chunk:
    cmpu b32 $r8, 0
    bra e copied
    mov $r9, 0x100           ; bytes in this xfer: 4 << 6 first ...
    mov $r14, 6              ; ... its size code
    or $r1, $r4, $r6
fit:
    sub b32 $r15, $r9, 1
    and $r15, $r1
    cmpu b32 $r15, 0
    bra ne smaller           ; source or destination not aligned to it
    cmpu b32 $r8, $r9
    bra nc sized             ; the remaining length holds it
smaller:
    shr b32 $r9, 1
    sub b32 $r14, 1
    bra fit
sized:
    shl b32 $r15, $r14, 0x10 ; local address 0 | size << 16
    shr b32 $r1, $r4, 8
    shl b32 $r2, $r5, 0x18
    or $r1, $r2
    mov $xdbase, $r1         ; source >> 8
    and $r2, $r4, 0xff
    xdld $r2, $r15           ; source -> D[0..bytes]
    xdwait
    shr b32 $r1, $r6, 8
    shl b32 $r2, $r7, 0x18
    or $r1, $r2
    mov $xdbase, $r1         ; destination >> 8
    and $r2, $r6, 0xff
    xdst $r2, $r15           ; D[0..bytes] -> destination
    xdwait
    add b32 $r4, $r9
    adc b32 $r5, 0
    add b32 $r6, $r9
    adc b32 $r7, 0
    sub b32 $r8, $r9
    bra chunk
"
    };
}

/// xfer memcpy service: copies SCRATCH2 bytes from guest address SCRATCH0 to guest address
/// SCRATCH1 (32-bit addresses; addresses and length multiples of 4) with xfers on port 0,
/// in the aligned chunks of the module docs; SCRATCH3 = 1 when done, 2 when an address or the
/// length was not a multiple of 4 (nothing copied); then `exit`.
pub const XFER_MEMCPY: &str = concat!(
    "
    clear b32 $r0
    mov $xtargets, $r0       ; port 0 for data loads and stores (§2.10.9)
    mov $r12, 0x1000
    mov $r13, 0x2000
    iord $r4, I[$r12 + 0]     ; SCRATCH0: source
    clear b32 $r5
    iord $r6, I[$r12 + 0x100] ; SCRATCH1: destination
    clear b32 $r7
    iord $r8, I[$r13 + 0]     ; SCRATCH2: length in bytes
",
    copy_loop!(),
    "
copied:
    mov $r1, 1
    iowr I[$r13 + 0x100], $r1 ; SCRATCH3 = 1: done
    exit
misaligned:
    mov $r1, 2
    iowr I[$r13 + 0x100], $r1 ; SCRATCH3 = 2: refused
    exit
"
);

/// The copy engine's methods: the object-class methods the firmware of [`COPY_ENGINE`]
/// handles, as PFIFO delivers them (byte method numbers).
///
/// The document has no copy-engine method list (§2.10 covers the falcon, not PCOPY's class),
/// and this firmware is the project's own: these numbers are project-defined. They sit in the
/// range §2.8.4 passes to the engine unmodified (0x200 and up on NV4:GF100; 0x180-0x1fc would
/// go through a RAMHT lookup). Each method's data is stored as it arrives; `LAUNCH` starts the
/// copy with the values stored last. Method 0 (`OBJECT`, the bound object's address) and every
/// other method are taken from the FIFO and ignored.
pub mod methods {
    /// Source address bits 39:32.
    pub const SRC_ADDRESS_HIGH: u32 = 0x200;
    /// Source address bits 31:0.
    pub const SRC_ADDRESS_LOW: u32 = 0x204;
    /// Destination address bits 39:32.
    pub const DST_ADDRESS_HIGH: u32 = 0x208;
    /// Destination address bits 31:0.
    pub const DST_ADDRESS_LOW: u32 = 0x20c;
    /// Bytes to copy (the addresses and the length must be multiples of 4).
    pub const LENGTH: u32 = 0x210;
    /// Semaphore address bits 39:32.
    pub const SEMAPHORE_ADDRESS_HIGH: u32 = 0x214;
    /// Semaphore address bits 31:0 (a multiple of 4).
    pub const SEMAPHORE_ADDRESS_LOW: u32 = 0x218;
    /// The 32-bit value written to the semaphore after the copy.
    pub const SEMAPHORE_SEQUENCE: u32 = 0x21c;
    /// Starts the copy; data bit 0 ([`LAUNCH_RELEASE_SEMAPHORE`]): then release the semaphore.
    pub const LAUNCH: u32 = 0x220;
    /// `LAUNCH` data: write `SEMAPHORE_SEQUENCE` to the semaphore address when the copy is done.
    pub const LAUNCH_RELEASE_SEMAPHORE: u32 = 1;
    /// SCRATCH3 value the firmware leaves when a `LAUNCH` was refused (an address or the length
    /// not a multiple of 4): nothing copied, no semaphore release.
    pub const ERROR_MISALIGNED: u32 = 2;
}

/// IMEM address of the copy-engine firmware's FIFO interrupt handler (`$iv0`).
pub const COPY_ENGINE_VECTOR: u32 = 4;

/// The copy-engine firmware (see [`copy_engine`] for its interface).
///
/// DMEM: `0x000`-`0x0ff` the xfer bounce buffer; `0x100`-`0x120` the method values (method
/// `m` at `0x100 + m - 0x200`).
pub const COPY_ENGINE: &str = concat!(
    "
    bra init
fifo_interrupt:              ; vector 0, at 4 (COPY_ENGINE_VECTOR)
    bclr $flags, 0            ; p0: the sleep below falls through
    bclr $flags, 0x14         ; is0: iret leaves ie0 off, the loop drains the FIFO
    iret
init:
    clear b32 $r0
    mov $r10, 0x1900         ; FIFO_DATA; FIFO_CMD +0x100; FIFO_OCCUPIED +0x300 (§2.10.10)
    mov $r11, 0x1d00         ; FIFO_ACK
    mov $r12, 0x1000         ; SCRATCH0; FIFO_ENABLE +0x200
    mov $r13, 0x2000         ; SCRATCH2; SCRATCH3 +0x100
    mov $r1, 4
    mov $iv0, $r1            ; fifo_interrupt
    mov $r2, 0x400
    iowr I[$r2], $r1         ; INTR_EN_SET: line 2 FIFO (level, §2.10.8)
    mov $r1, 2
    iowr I[$r12 + 0x200], $r1 ; FIFO_ENABLE: bit 1 FIFO access (envytools rnndb ACCESS_EN)
    mov $xtargets, $r0       ; port 0 for data loads and stores (§2.10.9)
wait:
    iord $r1, I[$r10 + 0x300] ; FIFO_OCCUPIED: methods waiting
    cmpu b32 $r1, 0
    bra ne take
    bset $flags, 0            ; p0: sleep until the handler clears it
    bset $flags, 0x10         ; ie0: a method that came meanwhile is taken before the sleep
    sleep 0                  ; §2.10.6: until an unmasked interrupt; resumes here
    bra wait
take:
    iord $r2, I[$r10 + 0x100] ; FIFO_CMD: method >> 2 in bits 10:0 (rnndb), subchannel 13:11
    iord $r3, I[$r10 + 0]     ; FIFO_DATA
    mov $r1, 1
    iowr I[$r11 + 0], $r1     ; FIFO_ACK: next method
    and $r2, 0x7ff
    shl b32 $r2, 2           ; byte method
    sub b32 $r2, 0x200
    cmpu b32 $r2, 0x24
    bra nc wait              ; not one of ours (0x200-0x220): ignored
    add b32 $r2, 0x100
    st b32 D[$r2], $r3       ; method value
    cmpu b32 $r2, 0x120
    bra ne wait              ; not LAUNCH
    ld b32 $r5, D[$r0 + 0x100]
    ld b32 $r4, D[$r0 + 0x104]
    ld b32 $r7, D[$r0 + 0x108]
    ld b32 $r6, D[$r0 + 0x10c]
    ld b32 $r8, D[$r0 + 0x110]
",
    copy_loop!(),
    "
copied:
    ld b32 $r1, D[$r0 + 0x120]
    and $r1, 1
    cmpu b32 $r1, 0
    bra e wait               ; LAUNCH without the release bit
    ld b32 $r7, D[$r0 + 0x114]
    ld b32 $r6, D[$r0 + 0x118]
    and $r1, $r6, 3
    cmpu b32 $r1, 0
    bra ne misaligned
    shr b32 $r1, $r6, 8
    shl b32 $r2, $r7, 0x18
    or $r1, $r2
    mov $xdbase, $r1
    and $r2, $r6, 0xff
    mov $r15, 0x11c          ; SEMAPHORE_SEQUENCE's slot, size 0: 4 bytes
    xdst $r2, $r15           ; semaphore release
    xdwait
    bra wait
misaligned:
    mov $r1, 2
    iowr I[$r13 + 0x100], $r1 ; SCRATCH3 = ERROR_MISALIGNED
    bra wait
"
);

/// The mailbox echo as an [`Image`] (see [`MAILBOX_ECHO`]).
pub fn mailbox_echo() -> Image {
    Image::assemble(MAILBOX_ECHO)
}

/// The DMEM checksum as an [`Image`] (see [`DMEM_CHECKSUM`]).
pub fn dmem_checksum() -> Image {
    Image::assemble(DMEM_CHECKSUM)
}

/// The xfer memcpy service as an [`Image`] (see [`XFER_MEMCPY`]).
pub fn xfer_memcpy() -> Image {
    Image::assemble(XFER_MEMCPY)
}

/// The copy-engine firmware for PCOPY as an [`Image`], entry 0.
///
/// It never halts: it enables PFIFO access (`FIFO_ENABLE` bit 1), then serves the method FIFO
/// in its IO space (envytools rnndb `falcon.xml`; §2.10.14 is "Todo"): `FIFO_OCCUPIED`
/// `I[0x1c00]` (methods waiting), `FIFO_CMD` `I[0x1a00]` (method >> 2 in bits 10:0, subchannel
/// in 13:11), `FIFO_DATA` `I[0x1900]`, and acknowledges each by writing 1 to `FIFO_ACK`
/// `I[0x1d00]`. With the FIFO empty it sleeps (§2.10.6 `sleep $p0`) until the FIFO interrupt
/// (falcon line 2, level-triggered, §2.10.8), which it enables in `INTR_EN` and takes on vector
/// 0 at [`COPY_ENGINE_VECTOR`]: the handler clears `$p0` and `is0`, so `iret` resumes at the
/// `sleep`, which falls through, with `ie0` off until the FIFO is drained again. The line's
/// routing is left at selector 0 (vector 0); a driver routes only its own lines to PMC. It
/// handles the [`methods`]: on `LAUNCH` it copies with
/// xfers on port 0 in aligned chunks (module docs), then, when asked, writes the 32-bit
/// sequence value to the semaphore address with a 4-byte xfer. A refused launch leaves
/// [`methods::ERROR_MISALIGNED`] in SCRATCH3.
pub fn copy_engine() -> Image {
    Image::assemble(COPY_ENGINE)
}

/// Every program's source, by name.
pub const ALL: [(&str, &str); 4] = [
    ("mailbox_echo", MAILBOX_ECHO),
    ("dmem_checksum", DMEM_CHECKSUM),
    ("xfer_memcpy", XFER_MEMCPY),
    ("copy_engine", COPY_ENGINE),
];
