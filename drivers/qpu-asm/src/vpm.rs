//! Setup words for VPMVCD_RD_SETUP / VPMVCD_WR_SETUP (VideoCore IV 3D tables 32-36): a QPU
//! writes one to pick the VPM rows it reads or writes, or to describe a VCD DMA (VDR load from
//! memory, VDW store to memory) that the following VPM_LD_ADDR / VPM_ST_ADDR write starts.
//!
//! Only the forms the example programs use: horizontal 32-bit rows of 16 words.

/// Table 32 (ID 0, bits 31:30): VPM generic block write setup. `STRIDE` (17:12) is added to
/// the address after each vector, `HORIZ` is bit 11, `SIZE` 9:8 (2 = 32-bit), `ADDR` 7:0 (the
/// row Y for horizontal 32-bit).
pub const fn write_rows(row: u8) -> u32 {
    const STRIDE_1: u32 = 1 << 12;
    const HORIZ: u32 = 1 << 11;
    const SIZE_32: u32 = 2 << 8;
    STRIDE_1 | HORIZ | SIZE_32 | (row & 0x3f) as u32
}

/// Table 33 (ID 0): VPM generic block read setup of `count` rows (1-16; 16 encodes as 0,
/// `NUM` 23:20) from `row`; bits 17:0 are laid out as in the write setup.
pub const fn read_rows(row: u8, count: u8) -> u32 {
    ((count & 0xf) as u32) << 20 | write_rows(row)
}

/// Table 34 (ID 2, bits 31:30): VDW DMA store of `rows` memory rows (`UNITS` 29:23, 128 as
/// 0) of `words` 32-bit words each (`DEPTH` 22:16), horizontal (bit 14), from VPM row
/// `vpm_row` (`VPMBASE` 13:3 = {Y\[6:0\], X\[3:0\]}), `MODEW` 0 (32-bit).
pub const fn store_rows(rows: u8, words: u8, vpm_row: u8) -> u32 {
    const ID_VDW_BASIC: u32 = 2 << 30;
    const HORIZ: u32 = 1 << 14;
    ID_VDW_BASIC
        | ((rows & 0x7f) as u32) << 23
        | ((words & 0x7f) as u32) << 16
        | HORIZ
        | ((vpm_row & 0x7f) as u32) << 7
}

/// Table 36 (ID 1, bit 31): VDR DMA load of `rows` rows (`NROWS` 19:16, 16 as 0) of 16
/// 32-bit words (`ROWLEN` 23:20 = 0), `MODEW` 0 (32-bit), memory pitch `8 << mpitch` bytes
/// (`MPITCH` 27:24, 1-15), VPM pitch 1 row (`VPITCH` 15:12), horizontal, into VPM row
/// `vpm_row` (`ADDRXY` 10:0 = {Y\[5:0\], X\[3:0\]}).
pub const fn load_rows(rows: u8, mpitch: u8, vpm_row: u8) -> u32 {
    const ID_VDR_BASIC: u32 = 1 << 31;
    const VPITCH_1: u32 = 1 << 12;
    ID_VDR_BASIC
        | ((mpitch & 0xf) as u32) << 24
        | ((rows & 0xf) as u32) << 16
        | VPITCH_1
        | ((vpm_row & 0x3f) as u32) << 4
}
