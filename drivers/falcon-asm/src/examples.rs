//! Example programs, as text: each assembles with [`crate::assemble`] (tests run them on a
//! small interpreter of the §2.10 semantics).
//!
//! IO addresses are the falcon-side ones of §2.10.10 ("Common IO register list"): SCRATCH0
//! `I[0x1000]`, SCRATCH1 `I[0x1100]` (host 0x040/0x044), the mailboxes the host polls.

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

/// DMEM checksum: the 32-bit sum of the words at `D[0]` .. `D[4 * n]`, `n` taken from
/// SCRATCH0, written to SCRATCH1; then `exit`.
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

/// xfer memcpy service: copies SCRATCH2 bytes (a multiple of 256) from external offset
/// SCRATCH0 to external offset SCRATCH1 through DMEM `0x0`-`0xff`, 256 bytes per xfer (size
/// code 6: `4 << 6` bytes, §2.10.9), on the ports and bases the host set in `$xtargets`
/// and `$xdbase` (here: both 0, set by the program); SCRATCH3 = 1 when done, then `exit`.
pub const XFER_MEMCPY: &str = "
    clear b32 $r9
    mov $xdbase, $r9         ; external base 0
    mov $xtargets, $r9       ; port 0 for loads and stores
    mov $r1, 0x1000
    iord $r2, I[$r1 + 0]     ; source offset
    iord $r3, I[$r1 + 0x100] ; destination offset
    mov $r6, 0x2000
    iord $r4, I[$r6 + 0]     ; length in bytes
    mov $r5, 0               ; local DMEM address 0 ...
    sethi $r5, 6             ; ... | size 6 << 16 (256 bytes)
next:
    cmpu b32 $r4, 0
    bra e finished
    xdld $r2, $r5            ; external $r2 -> D[0..0x100]
    xdwait
    xdst $r3, $r5            ; D[0..0x100] -> external $r3
    xdwait
    add b32 $r2, 0x100
    add b32 $r3, 0x100
    sub b32 $r4, 0x100
    bra next
finished:
    mov $r7, 1
    iowr I[$r6 + 0x100], $r7 ; SCRATCH3 = 1
    exit
";

/// Every example, by name.
pub const ALL: [(&str, &str); 3] = [
    ("mailbox_echo", MAILBOX_ECHO),
    ("dmem_checksum", DMEM_CHECKSUM),
    ("xfer_memcpy", XFER_MEMCPY),
];
