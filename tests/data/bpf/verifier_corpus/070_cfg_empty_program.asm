# license: GPL
# expect: reject E2BIG
# why: a program with no instructions
