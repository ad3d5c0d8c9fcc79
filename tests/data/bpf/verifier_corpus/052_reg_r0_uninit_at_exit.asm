# license: GPL
# expect: reject EACCES
# why: r0 must be initialized at exit
exit
