# license: GPL
# expect: reject EACCES
# why: get_attach_cookie with a moved ctx pointer
add %r1, 8
call bpf_get_attach_cookie
exit
