//! The IDT: every CPU exception logs its vector, error code and RIP and fails the case (except
//! `#BP`, which is counted and resumed); the mailbox's MSI-X vector calls the mailbox interrupt
//! path; stray PIC and spurious LAPIC vectors are ignored; any other vector fails the case.

use super::exit::{Exit, exit};
use super::{gdt, lapic, pic};
use core::sync::atomic::{AtomicU32, Ordering};
use spin::Once;
use x86_64::registers::control::Cr2;
use x86_64::structures::idt::{InterruptDescriptorTable, InterruptStackFrame, PageFaultErrorCode};

/// IDT vectors of the ivshmem functions' MSI-X entry [`gpu_mailbox::VECTOR_IRQ`] (device
/// interrupts), one per mailbox slot: each emulated GPU interrupts on its own vector.
pub const MAILBOX_VECTORS: [u8; crate::mailbox::MAX_MAILBOXES] = [0x40, 0x41];

static IDT: Once<InterruptDescriptorTable> = Once::new();
static BREAKPOINTS: AtomicU32 = AtomicU32::new(0);

/// `#BP` exceptions taken so far.
pub fn breakpoints() -> u32 {
    BREAKPOINTS.load(Ordering::SeqCst)
}

fn fatal(
    vector: u8,
    name: &'static str,
    error_code: Option<u64>,
    frame: &InterruptStackFrame,
) -> ! {
    defmt::error!(
        "exception {=u8} ({=str}): error_code={} rip={=u64:#x} rsp={=u64:#x} cs={=u64:#x} rflags={=u64:#x}",
        vector,
        name,
        error_code,
        frame.instruction_pointer.as_u64(),
        frame.stack_pointer.as_u64(),
        frame.code_segment.0 as u64,
        frame.cpu_flags.bits()
    );
    exit(Exit::Failure)
}

macro_rules! fatal_handler {
    ($fn_name:ident, $vector:literal, $name:literal) => {
        extern "x86-interrupt" fn $fn_name(frame: InterruptStackFrame) {
            fatal($vector, $name, None, &frame)
        }
    };
    ($fn_name:ident, $vector:literal, $name:literal, error_code) => {
        extern "x86-interrupt" fn $fn_name(frame: InterruptStackFrame, code: u64) {
            fatal($vector, $name, Some(code), &frame)
        }
    };
}

fatal_handler!(divide_error, 0, "#DE divide error");
fatal_handler!(debug, 1, "#DB debug");
fatal_handler!(nmi, 2, "NMI");
fatal_handler!(overflow, 4, "#OF overflow");
fatal_handler!(bound_range, 5, "#BR bound range");
fatal_handler!(invalid_opcode, 6, "#UD invalid opcode");
fatal_handler!(device_not_available, 7, "#NM device not available");
fatal_handler!(invalid_tss, 10, "#TS invalid TSS", error_code);
fatal_handler!(segment_not_present, 11, "#NP segment not present", error_code);
fatal_handler!(stack_segment, 12, "#SS stack segment", error_code);
fatal_handler!(general_protection, 13, "#GP general protection", error_code);
fatal_handler!(x87_floating_point, 16, "#MF x87 floating point");
fatal_handler!(alignment_check, 17, "#AC alignment check", error_code);
fatal_handler!(simd_floating_point, 19, "#XM SIMD floating point");
fatal_handler!(virtualization, 20, "#VE virtualization");
fatal_handler!(control_protection, 21, "#CP control protection", error_code);
fatal_handler!(hv_injection, 28, "#HV hypervisor injection");
fatal_handler!(vmm_communication, 29, "#VC VMM communication", error_code);
fatal_handler!(security, 30, "#SX security", error_code);

extern "x86-interrupt" fn breakpoint(frame: InterruptStackFrame) {
    BREAKPOINTS.fetch_add(1, Ordering::SeqCst);
    defmt::info!(
        "#BP (int3) caught at rip={=u64:#x}, resuming",
        frame.instruction_pointer.as_u64()
    );
}

extern "x86-interrupt" fn double_fault(frame: InterruptStackFrame, code: u64) -> ! {
    fatal(8, "#DF double fault", Some(code), &frame)
}

extern "x86-interrupt" fn machine_check(frame: InterruptStackFrame) -> ! {
    fatal(18, "#MC machine check", None, &frame)
}

extern "x86-interrupt" fn page_fault(frame: InterruptStackFrame, code: PageFaultErrorCode) {
    let address = Cr2::read_raw();
    defmt::error!("page fault at address {=u64:#x}", address);
    fatal(14, "#PF page fault", Some(code.bits()), &frame)
}

extern "x86-interrupt" fn mailbox0_irq(_frame: InterruptStackFrame) {
    crate::mailbox::handle_interrupt(0);
    lapic::eoi();
}

extern "x86-interrupt" fn mailbox1_irq(_frame: InterruptStackFrame) {
    crate::mailbox::handle_interrupt(1);
    lapic::eoi();
}

/// A masked PIC can still deliver its spurious IRQ7/IRQ15: ignore it (no EOI for spurious).
extern "x86-interrupt" fn pic_spurious(_frame: InterruptStackFrame) {}

/// Spurious LAPIC interrupts need no EOI.
extern "x86-interrupt" fn lapic_spurious(_frame: InterruptStackFrame) {}

extern "x86-interrupt" fn unexpected(frame: InterruptStackFrame) {
    defmt::error!(
        "unexpected interrupt (no handler for its vector) at rip={=u64:#x}",
        frame.instruction_pointer.as_u64()
    );
    exit(Exit::Failure)
}

/// Build and load the IDT. Call after [`gdt::init`].
pub fn init() {
    let idt = IDT.call_once(|| {
        let mut idt = InterruptDescriptorTable::new();
        idt.divide_error.set_handler_fn(divide_error);
        idt.debug.set_handler_fn(debug);
        idt.breakpoint.set_handler_fn(breakpoint);
        idt.overflow.set_handler_fn(overflow);
        idt.bound_range_exceeded.set_handler_fn(bound_range);
        idt.invalid_opcode.set_handler_fn(invalid_opcode);
        idt.device_not_available.set_handler_fn(device_not_available);
        idt.invalid_tss.set_handler_fn(invalid_tss);
        idt.segment_not_present.set_handler_fn(segment_not_present);
        idt.stack_segment_fault.set_handler_fn(stack_segment);
        idt.general_protection_fault.set_handler_fn(general_protection);
        idt.page_fault.set_handler_fn(page_fault);
        idt.x87_floating_point.set_handler_fn(x87_floating_point);
        idt.alignment_check.set_handler_fn(alignment_check);
        idt.simd_floating_point.set_handler_fn(simd_floating_point);
        idt.virtualization.set_handler_fn(virtualization);
        idt.cp_protection_exception.set_handler_fn(control_protection);
        idt.hv_injection_exception.set_handler_fn(hv_injection);
        idt.vmm_communication_exception.set_handler_fn(vmm_communication);
        idt.security_exception.set_handler_fn(security);
        // SAFETY: FAULT_IST_INDEX is a valid IST slot whose stack `gdt::init` installed and that
        // no other handler uses while one of these runs (they do not return, except NMI which
        // fails the case too).
        unsafe {
            idt.double_fault.set_handler_fn(double_fault).set_stack_index(gdt::FAULT_IST_INDEX);
            idt.machine_check.set_handler_fn(machine_check).set_stack_index(gdt::FAULT_IST_INDEX);
            idt.non_maskable_interrupt.set_handler_fn(nmi).set_stack_index(gdt::FAULT_IST_INDEX);
        }
        for vector in 32..=255u8 {
            idt[vector].set_handler_fn(unexpected);
        }
        for vector in pic::PIC_VECTOR_BASE..pic::PIC_VECTOR_BASE + 16 {
            idt[vector].set_handler_fn(pic_spurious);
        }
        idt[MAILBOX_VECTORS[0]].set_handler_fn(mailbox0_irq);
        idt[MAILBOX_VECTORS[1]].set_handler_fn(mailbox1_irq);
        idt[lapic::SPURIOUS_VECTOR].set_handler_fn(lapic_spurious);
        idt
    });
    idt.load();
}
