#!/usr/bin/env python3
"""PSS of a running agent (supervisor + fork server + workers) summed by part, from /proc/PID/smaps.

Usage: scripts/pss-by-part.py SUPERVISOR_PID [--supervisor]
  Prints kB of PSS per part (each library's code and its relocated data, heap, thread stacks,
  glibc's malloc arenas, other anonymous memory, the shared rings, the store's files) for all
  processes together and for the supervisor, the fork server and the workers; with
  --supervisor, the supervisor's RSS and PSS by part too. A thread stack is an anonymous
  mapping after a guard page; an arena a 64 MiB-aligned mapping whose rest up to 64 MiB is
  reserved without access.
"""
import collections
import os
import re
import sys

def children(pid):
    out = []
    for t in os.listdir(f"/proc/{pid}/task"):
        try: out += [int(x) for x in open(f"/proc/{pid}/task/{t}/children").read().split()]
        except OSError: pass
    return out

def part(name, perm):
    base = os.path.basename(name)
    if name.startswith("@"): return name[1:]
    if name == "[heap]": return "heap"
    if name == "[stack]": return "thread stacks"
    if name.startswith("["): return "other"
    if "memfd:agent-ring" in name: return "shared rings"
    kind = "code/const" if "w" not in perm else "data (relocated, copied on write)"
    if base.startswith("libswiftCore"): lib = "libswiftCore"
    elif base.startswith("lib_FoundationICU"): lib = "ICU data+code"
    elif base.startswith("libFoundation") or base.startswith("libswiftFoundation"): lib = "Foundation (" + base.split(".so")[0] + ")"
    elif base.startswith("libswift") or base.startswith("libdispatch") or base.startswith("libBlocks"): lib = "other Swift libs"
    elif base.startswith("libsqlite"): lib = "SQLite"
    elif base in ("agent-control", "agent-worker"): lib = base
    elif base.startswith("libbench") or base.endswith(".so") and "/.build/" in name: lib = "module libraries"
    elif name.endswith((".db", ".db-wal", ".db-shm", "-wal", "-shm")): lib = "store files"
    else: lib = "C/C++ libs"
    return f"{lib} {kind}"

SPAN = 64 << 20
def anon_kind(start, end, perm, prev, nxt):
    # glibc arena: 64 MiB aligned, rw part then ---p rest up to 64 MiB
    if start % SPAN == 0 and nxt and nxt[2] == "---p" and nxt[0] == end and nxt[1] - start == SPAN: return "malloc arenas (threads')"
    # thread stack: preceded by a guard page
    if prev and prev[2] == "---p" and prev[1] == start and end - start >= (64 << 10): return "thread stacks"
    return "anon other (bss, mmap'd malloc, dispatch, TLS)"

def smaps(pid):
    parts = collections.Counter(); rss = collections.Counter()
    name = perm = None
    maps = []
    for line in open(f"/proc/{pid}/maps"):
        f = line.split()
        a, b = f[0].split("-"); maps.append((int(a,16), int(b,16), f[1], f[5] if len(f) > 5 else ""))
    index = {m[0]: i for i, m in enumerate(maps)}
    for line in open(f"/proc/{pid}/smaps"):
        m = re.match(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$", line)
        if m:
            perm, name = m.group(3), m.group(4).strip()
            if name == "":
                i = index[int(m.group(1),16)]
                name = "@" + anon_kind(maps[i][0], maps[i][1], perm, maps[i-1] if i > 0 else None, maps[i+1] if i+1 < len(maps) else None)
            continue
        if line.startswith("Pss:"): parts[part(name, perm)] += int(line.split()[1])
        elif line.startswith("Rss:"): rss[part(name, perm)] += int(line.split()[1])
    return parts, rss

sup = int(sys.argv[1])
kids = children(sup)
roles = {sup: "supervisor"}
for k in kids:
    cmd = open(f"/proc/{k}/cmdline").read().replace("\0", " ")
    roles[k] = "fork server" if "--fork-server" in cmd else "worker" if "--process" in cmd else "other child"
total = collections.Counter(); byrole = collections.defaultdict(collections.Counter); count = collections.Counter()
for pid, role in roles.items():
    p, _ = smaps(pid); count[role] += 1
    for k, v in p.items(): total[k] += v; byrole[role][k] += v
print(f"{'part':58s} {'all kB':>8s} {'superv':>8s} {'forksrv':>8s} {'workers':>8s}")
for k, v in total.most_common():
    print(f"{k:58s} {v:8d} {byrole['supervisor'][k]:8d} {byrole['fork server'][k]:8d} {byrole['worker'][k]:8d}")
print(f"{'TOTAL':58s} {sum(total.values()):8d} {sum(byrole['supervisor'].values()):8d} {sum(byrole['fork server'].values()):8d} {sum(byrole['worker'].values()):8d}  ({count['worker']} workers)")

if len(sys.argv) > 2 and sys.argv[2] == "--supervisor":
    p, r = smaps(sup)
    print(f"\nsupervisor {sup}: {'part':56s} {'RSS kB':>8s} {'PSS kB':>8s}")
    for k, v in sorted(r.items(), key=lambda kv: -kv[1]):
        if v: print(f"  {k:66s} {v:8d} {p[k]:8d}")
    print(f"  {'TOTAL':66s} {sum(r.values()):8d} {sum(p.values()):8d}")
