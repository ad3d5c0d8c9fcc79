# license: GPL
# expect: accept
# why: returning a pointer from the program
mov %r0, %r10
exit
