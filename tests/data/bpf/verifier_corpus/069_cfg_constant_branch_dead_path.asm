# license: GPL
# expect: accept
# why: a branch never taken (known constant) is still explored as CFG but pruned as dead
mov %r0, 0
jeq %r0, 1, other
exit
other:
mov %r0, 1
exit
