# license: GPL
# expect: reject EACCES
# why: 4-byte ctx load at 184, past the end
ldxw %r0, [%r1+184]
exit
