# license: GPL
# expect: accept
# why: a plain 64-bit immediate
lddw %r0, 0x1122334455667788
exit
