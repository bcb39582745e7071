#!/usr/bin/env python3
"""Before the move: the folder->folder dependency matrix of Sources/AgentRuntime (identifier
match), and with --layers the target matrix, sizes and back-edges the move would make (run it
on a tree before scripts/split/move.py; after the move, check.py and imports.py --check).
usage: deps.py [ROOT] [--layers FILE]   layers file: 'Folder Target' lines + 'order: T1 T2 ...' (low->high)"""
import os, re, sys, collections, json
ROOT = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith('--') else 'Sources/AgentRuntime'
from layers import DECL, strip  # the same rules as imports.py and check.py
def folder(path):
    rel = os.path.relpath(os.path.dirname(path), ROOT)
    return rel
files = {}
for d, _, fs in os.walk(ROOT):
    for f in fs:
        if f.endswith('.swift'):
            p = os.path.join(d, f); files[p] = strip(open(p).read())
decl = {}          # symbol -> folder
declfile = {}      # symbol -> file
extended = collections.defaultdict(set)   # file -> types it extends
for p, src in files.items():
    for line in src.split('\n'):
        if line[:1].isspace() or not line: continue
        m = DECL.match(line)
        if not m: continue
        kind, name = m.groups()
        if kind == 'extension': extended[p].add(name); continue
        if name in decl and decl[name] != folder(p): print('dup', name, file=sys.stderr)
        decl[name] = folder(p); declfile[name] = os.path.relpath(p, ROOT)
IDENT = re.compile(r'\b[A-Za-z_][A-Za-z0-9_]*\b')
edges = collections.Counter()                       # (from,to) -> number of (file,symbol) refs
detail = collections.defaultdict(lambda: collections.defaultdict(set))  # (from,to) -> file -> symbols
for p, src in files.items():
    src_f = folder(p)
    ids = set(IDENT.findall(src))
    for s in ids:
        to = decl.get(s)
        if to is None or to == src_f: continue
        edges[(src_f, to)] += 1
        detail[(src_f, to)][os.path.relpath(p, ROOT)].add(s)
folders = sorted({folder(p) for p in files})
short = {f: f.replace('Work/', 'W/')[:12] for f in folders}
if '--json' in sys.argv:
    json.dump({'edges': {f'{a}->{b}': {k: sorted(v) for k, v in detail[(a, b)].items()} for (a, b) in edges}}, sys.stdout, indent=1); sys.exit()
print('rows: from folder; columns: to folder; cell = number of (file, symbol) references\n')
w = 6
hdr = ''.join(f'{i:>{w}}' for i in range(len(folders)))
print(f"{'':16}{hdr}")
for i, a in enumerate(folders):
    print(f'{i:>2} {short[a]:13}' + ''.join(f"{(edges.get((a,b)) or '.'):>{w}}" for b in folders))
print()
for i, a in enumerate(folders): print(f'{i:>2} = {a}')
# layering check
if '--layers' in sys.argv:
    lf = sys.argv[sys.argv.index('--layers') + 1]
    target, order = {}, []
    fileTarget = {}; symTarget = {}
    for line in open(lf):
        line = line.split('#')[0].strip()
        if not line: continue
        if line.startswith('order:'): order = line.split()[1:]; continue
        k, t = line.split()
        if k.startswith('@'): symTarget[k[1:]] = t
        elif k.endswith('.swift'): fileTarget[k] = t
        else: target[k] = t
    rank = {t: i for i, t in enumerate(order)}
    def tgt(relfile):
        return fileTarget.get(relfile, target.get(os.path.dirname(relfile)))
    # recompute at file granularity against target assignment
    symT = {s: symTarget.get(s, tgt(declfile[s])) for s in decl}
    tedges = collections.Counter(); bad = collections.defaultdict(lambda: collections.defaultdict(set))
    tsize = collections.Counter()
    for p, src in files.items():
        rel = os.path.relpath(p, ROOT); t = tgt(rel)
        tsize[t] += open(p).read().count('\n')
        for s in set(IDENT.findall(src)):
            if s not in symT: continue
            u = symT[s]
            if u == t: continue
            tedges[(t, u)] += 1
            if rank[u] > rank[t] or (rank[u] == rank[t]): bad[(t, u)][rel].add(s)
    print('\ntarget sizes (lines):'); [print(f'  {t:18} {tsize[t]:6}') for t in order]
    print('\ntarget edges (from -> to: refs)')
    for (a, b), n in sorted(tedges.items(), key=lambda x: (rank[x[0][0]], rank[x[0][1]])):
        print(f"  {a:18} -> {b:18} {n:4}{'   BACK-EDGE' if (a,b) in bad else ''}")
    print('\nback-edges (file: symbols):')
    for (a, b), fs in sorted(bad.items(), key=lambda x: -sum(len(v) for v in x[1].values())):
        print(f'== {a} -> {b}  ({sum(len(v) for v in fs.values())} refs)')
        for f, ss in sorted(fs.items()): print(f'   {f}: {", ".join(sorted(ss))}')
else:
    print('\nall edges, by count:')
    for (a, b), n in edges.most_common():
        print(f'{a} -> {b}: {n}')
