# license: GPL
# expect: accept
# why: get_attach_cookie takes the ctx
call bpf_get_attach_cookie
exit
