# license: GPL
# expect: reject EACCES
# why: ctx is read-only: ST (immediate) to a regs slot
stdw [%r1+0], 0
mov %r0, 0
exit
