/* libuserperf_condvar.so: the versioned pthread_cond_wait and pthread_cond_timedwait that a
   program binds to, preloaded before the agent with --off-cpu (docs/record.md, "Off-CPU time").
   glibc has two of each on x86-64: the default @GLIBC_2.3.2 and the old condition variable
   @GLIBC_2.2.5. The dynamic loader matches a versioned reference only to a definition of that
   version (or to an unversioned one, which the agent's exports are), so these four definitions
   route each program to the wrapper of the implementation it was linked to. Each is a jump, not a
   call: the wrapper's return address stays the program's call site, where the sample's callchain
   starts. The wrappers resolve libc's function of their version with dlvsym(RTLD_NEXT), which
   from the agent, loaded after this object, finds libc's and not these. */
#define ENTRY(local, wrapper)              \
  .globl local;                            \
  .type local, @function;                  \
  local:                                   \
  endbr64;                                 \
  jmp *wrapper@GOTPCREL(%rip);             \
  .size local, .-local

        .text
ENTRY(cond_wait_2_3_2, userperf_offcpu_cond_wait_2_3_2)
ENTRY(cond_wait_2_2_5, userperf_offcpu_cond_wait_2_2_5)
ENTRY(cond_timedwait_2_3_2, userperf_offcpu_cond_timedwait_2_3_2)
ENTRY(cond_timedwait_2_2_5, userperf_offcpu_cond_timedwait_2_2_5)

        .symver cond_wait_2_3_2, pthread_cond_wait@@GLIBC_2.3.2, remove
        .symver cond_wait_2_2_5, pthread_cond_wait@GLIBC_2.2.5, remove
        .symver cond_timedwait_2_3_2, pthread_cond_timedwait@@GLIBC_2.3.2, remove
        .symver cond_timedwait_2_2_5, pthread_cond_timedwait@GLIBC_2.2.5, remove

        .section .note.GNU-stack, "", @progbits
