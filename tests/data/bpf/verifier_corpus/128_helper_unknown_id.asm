# license: GPL
# expect: reject EINVAL
# why: helper id 99999 does not exist
call 99999
exit
