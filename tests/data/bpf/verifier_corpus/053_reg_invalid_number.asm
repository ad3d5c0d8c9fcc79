# license: GPL
# expect: reject EINVAL
# why: register number 11 does not exist (mov r11, 0)
raw 0x0000000000000bb7
raw 0x00000000000000b7
raw 0x0000000000000095
