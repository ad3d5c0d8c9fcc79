// Calls back from a frame of its own in a shared object linked by lld, whose segments sit one page
// further in memory than in the file (p_vaddr != p_offset): the dwarf unwinder must place its CFI
// by the segment, not by the mapping's file offset.
__attribute__((noinline)) void lld_callee(void (*callback)(void*), void* arg) {
  volatile char frame[256];
  frame[0] = 1;
  callback(arg);
  __asm__ volatile("" ::"r"(frame) : "memory");  // keeps the frame and the call (no tail call)
}
