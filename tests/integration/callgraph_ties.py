#!/usr/bin/env python3
"""Are two `report --stdio` texts equal up to the order of call-graph siblings of equal share?

perf orders siblings by share; among equal shares, by the heap addresses of its `struct dso`
objects (match_chain_dso_addresses in util/callchain.c), which no other program can reproduce and
which change with the order perf happened to allocate them. This reads both texts as entries and
call-graph trees (perf's graph layout: each level 11 columns right of its parent's marker, where
its `|--P%--` or ` --P%--` marker and its chain's continuation lines sit; a `---` chain's
continuations 3 columns right of it), sorts only the runs of
adjacent siblings whose printed shares are equal, and compares. Everything else must be equal
line for line, siblings of different shares in the same order.

Usage: callgraph_ties.py PERF_TEXT USERPERF_TEXT; exit 0 when equal up to ties, 1 when not,
2 when a graph line has a shape this reader does not know (then nothing is excused).
"""
import re
import sys

BRANCH = re.compile(r"[| ]--(\d+\.\d+%)--")
ENTRY = re.compile(r"^\s+\d+\.\d+%")


class Shape(Exception):
    pass


class Node:
    def __init__(self, share, name_col):
        self.share = share
        self.name_col = name_col
        self.chain = []
        self.children = []

    def canonical(self):
        kids = [k.canonical() for k in self.children]
        out, i = [], 0
        while i < len(kids):  # sort each run of equal shares, keep the runs in order
            j = i
            while j < len(kids) and kids[j][0] == kids[i][0]:
                j += 1
            out.extend(sorted(kids[i:j], key=repr))
            i = j
        return (self.share, tuple(self.chain), tuple(out))


def parse_graph(lines):
    # The entry's graph hangs from a column of its own: a `---` chain starts there, and in
    # --children views a caller's branches (` --P%--`) sit right on it.
    base = len(lines[0]) - len(lines[0].lstrip(" "))
    top = Node(None, base)
    stack = [top]

    def owner(col):
        while stack and stack[-1].name_col != col:
            stack.pop()
        if not stack:
            raise Shape("no node owns column %d" % col)
        return stack[-1]

    for line in lines:
        if set(line) <= {"|", " "}:
            continue  # a spacer
        m = BRANCH.search(line)
        if m:
            parent = owner(m.start())
            node = Node(m.group(1), m.start() + 11)  # perf indents each level by 11
            node.chain.append(line[m.end():])
            parent.children.append(node)
            stack.append(node)
            continue
        stripped = line.lstrip(" |")
        col = len(line) - len(stripped)
        if stripped.startswith("---"):
            node = Node(None, col + 3)
            node.chain.append(stripped[3:])
            owner(col).children.append(node)
            stack.append(node)
            continue
        owner(col).chain.append(stripped)
    return top.canonical()


def canonical(text):
    out, graph = [], []

    def flush():
        if graph:
            out.append(("graph", parse_graph(graph)))
            graph.clear()

    for line in text.split("\n"):
        if line == "" or line.startswith("#") or ENTRY.match(line):
            flush()
            out.append(("line", line))
        else:
            graph.append(line)
    flush()
    return out


def main():
    texts = [open(path, encoding="utf-8", errors="replace").read() for path in sys.argv[1:3]]
    try:
        a, b = (canonical(t) for t in texts)
    except Shape as e:
        print("callgraph_ties: %s" % e, file=sys.stderr)
        return 2
    return 0 if a == b else 1


if __name__ == "__main__":
    sys.exit(main())
