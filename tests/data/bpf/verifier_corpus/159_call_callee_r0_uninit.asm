# license: GPL
# expect: reject EACCES
# why: the callee exits without setting r0
call local f
exit
f:
exit
