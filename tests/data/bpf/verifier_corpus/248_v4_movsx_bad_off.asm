# license: GPL
# expect: reject EINVAL
# why: movsx with off 24 is not a valid sign-extension width
raw 0x00000000000000b7
raw 0x00000000001801bf
raw 0x0000000000000095
