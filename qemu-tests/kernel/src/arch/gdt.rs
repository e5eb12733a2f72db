//! The kernel's GDT: 64-bit code and data segments and a TSS whose interrupt stack table gives
//! double faults, NMIs and machine checks their own stack (a stack overflow then still reports).
//! Must be loaded before the IDT is built: IDT entries take the current CS selector.

use core::cell::UnsafeCell;
use spin::Once;
use x86_64::VirtAddr;
use x86_64::instructions::segmentation::{CS, DS, ES, SS, Segment};
use x86_64::instructions::tables::load_tss;
use x86_64::registers::segmentation::SegmentSelector;
use x86_64::structures::gdt::{Descriptor, GlobalDescriptorTable};
use x86_64::structures::tss::TaskStateSegment;

/// IST slot (0-based) of the double-fault, NMI and machine-check handlers.
pub const FAULT_IST_INDEX: u16 = 0;
const FAULT_STACK_SIZE: usize = 32 * 1024;

#[repr(C, align(16))]
struct Stack(UnsafeCell<[u8; FAULT_STACK_SIZE]>);
// SAFETY: the stack is only ever used by the CPU as the IST stack; Rust never accesses it.
unsafe impl Sync for Stack {}
static FAULT_STACK: Stack = Stack(UnsafeCell::new([0; FAULT_STACK_SIZE]));

struct Tables {
    gdt: GlobalDescriptorTable,
    code: SegmentSelector,
    data: SegmentSelector,
    tss: SegmentSelector,
}

static TSS: Once<TaskStateSegment> = Once::new();
static TABLES: Once<Tables> = Once::new();

/// Build and load the GDT and TSS, reload every segment register.
pub fn init() {
    let tss = TSS.call_once(|| {
        let mut tss = TaskStateSegment::new();
        let top = VirtAddr::from_ptr(FAULT_STACK.0.get()) + FAULT_STACK_SIZE as u64;
        tss.interrupt_stack_table[usize::from(FAULT_IST_INDEX)] = top;
        tss
    });
    let tables = TABLES.call_once(|| {
        let mut gdt = GlobalDescriptorTable::new();
        let code = gdt.append(Descriptor::kernel_code_segment());
        let data = gdt.append(Descriptor::kernel_data_segment());
        let tss = gdt.append(Descriptor::tss_segment(tss));
        Tables { gdt, code, data, tss }
    });
    tables.gdt.load();
    // SAFETY: the selectors index descriptors of the GDT just loaded, which lives forever.
    unsafe {
        CS::set_reg(tables.code);
        SS::set_reg(tables.data);
        DS::set_reg(tables.data);
        ES::set_reg(tables.data);
        load_tss(tables.tss);
    }
}
