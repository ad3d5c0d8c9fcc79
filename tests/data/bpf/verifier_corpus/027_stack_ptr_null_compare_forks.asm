# license: GPL
# expect: reject EACCES
# why: a stack pointer compared with 0 is not a decided branch either (reg_not_null has no PTR_TO_STACK): the path where r0 is never set is walked
mov %r2, %r10
jne %r2, 0, set
exit
set:
mov %r0, 0
exit
