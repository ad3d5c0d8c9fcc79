# license: GPL
# expect: reject EINVAL
# why: opcode 0xff does not exist
raw 0x00000000000000b7
raw 0x00000000000000ff
raw 0x0000000000000095
