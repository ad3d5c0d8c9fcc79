# license: GPL
# expect: reject EACCES
# why: the ctx pointer compared with 0 is not a decided branch (reg_not_null has no PTR_TO_CTX): the taken path, where r0 is never set, is walked too
jeq %r1, 0, out
mov %r0, 0
out:
exit
