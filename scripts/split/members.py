#!/usr/bin/env python3
"""Member-level back-edges: members (func/var/let/case at type scope) declared once in the package,
in a file of a higher target, used as `.name` in a file of a lower target. usage: members.py LAYERS"""
import os, re, sys, collections
ROOT = '/work/main/Sources/AgentRuntime'
exec(open('/tmp/plan35/deps.py').read().split("IDENT = ")[0].replace("ROOT = sys.argv[1] if", "ROOT = '/work/main/Sources/AgentRuntime' if False and"))
target, order, fileTarget, symTarget = {}, [], {}, {}
for line in open(sys.argv[1]):
    line = line.split('#')[0].strip()
    if not line: continue
    if line.startswith('order:'): order = line.split()[1:]; continue
    k, t = line.split()
    if k.startswith('@'): symTarget[k[1:]] = t
    elif k.endswith('.swift'): fileTarget[k] = t
    else: target[k] = t
rank = {t: i for i, t in enumerate(order)}
tgt = lambda rel: fileTarget.get(rel, target.get(os.path.dirname(rel)))
M = re.compile(r'^    (?:@\w+\s+)*(?:(?:public|package|internal|private|fileprivate|static|final|override|mutating|nonisolated|lazy)\s+|(?:public|private|internal)\(set\)\s+)*(func|var|let)\s+([a-zA-Z_]\w*)')
where = collections.defaultdict(set)
for p, src in files.items():
    rel = os.path.relpath(p, ROOT)
    for line in src.split('\n'):
        m = M.match(line)
        if m and 'private' not in line.split(m.group(1))[0]: where[m.group(2)].add(rel)
uniq = {n: next(iter(fs)) for n, fs in where.items() if len(fs) == 1 and len(n) > 5}
bad = collections.defaultdict(set)
for p, src in files.items():
    rel = os.path.relpath(p, ROOT); t = tgt(rel)
    for n in set(re.findall(r'\.([a-zA-Z_]\w*)', src)):
        if n in uniq:
            d = uniq[n]; u = tgt(d)
            if u != t and rank[u] > rank[t]: bad[(t, u)].add(f'{rel} uses .{n} ({d})')
for (a, b), xs in sorted(bad.items()):
    print(f'== {a} -> {b}: {len(xs)}')
    for x in sorted(xs): print('   ', x)
