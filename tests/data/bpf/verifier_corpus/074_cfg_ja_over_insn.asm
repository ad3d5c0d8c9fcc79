# license: GPL
# expect: accept
# why: a forward ja skipping one instruction that is still reachable from elsewhere
mov %r0, 0
ldxdw %r2, [%r1+168]
jeq %r2, 0, set
ja out
set:
mov %r0, 1
out:
exit
