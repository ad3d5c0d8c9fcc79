# license: GPL
# expect: accept
# why: a load of a never-written stack slot (privileged: allow_uninit_stack)
ldxdw %r0, [%r10-8]
exit
