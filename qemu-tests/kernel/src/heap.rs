//! The kernel heap: `linked_list_allocator` over [`crate::memory::HEAP_SIZE`] bytes of RAM.
//! Interrupt handlers must not allocate (the heap lock does not disable interrupts).

use linked_list_allocator::LockedHeap;

#[global_allocator]
static HEAP: LockedHeap = LockedHeap::empty();

/// Hand `size` bytes at `start` to the allocator.
///
/// # Safety
/// The range must be unused RAM, identity mapped and writable, and given only once.
pub unsafe fn init(start: u64, size: u64) {
    // SAFETY: forwarded from the caller.
    unsafe { HEAP.lock().init(start as usize as *mut u8, size as usize) };
}

/// Bytes currently allocated.
pub fn used() -> usize {
    HEAP.lock().used()
}
