# license: GPL
# expect: reject EINVAL
# why: ja +5 past the end of a 3-instruction program
raw 0x00000000000000b7
raw 0x0000000000050005
raw 0x0000000000000095
