#!/usr/bin/env python3
"""Implicit-internal type-scope declarations whose name is used (identifier match) in a file assigned to
another target: an estimate of how many need `package`. usage: needpkg.py LAYERS"""
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
tgt = lambda rel: fileTarget.get(rel, target.get(os.path.dirname(rel)))
D = re.compile(r'^(\s*)((?:@\w+(?:\([^)]*\))?\s+|(?:public|open|package|internal|private|fileprivate)(?:\(set\))?\s+|(?:static|class|final|override|mutating|nonisolated|indirect|convenience|required|lazy|weak|unowned)\s+)*)(func|init|var|let|class|struct|enum|protocol|typealias|subscript|actor)\s*([A-Za-z_]\w*)?')
decls = []  # (rel, target, kind, name, toplevel)
for p, src in files.items():
    rel = os.path.relpath(p, ROOT); stack = []
    for line in src.split('\n'):
        m = D.match(line)
        inType = all(k == 'type' for k in stack)
        if m and inType:
            mods, kind, name = m.group(2), m.group(3), m.group(4) or m.group(3)
            if not re.search(r'\b(public|open|package|internal|private|fileprivate)\b(?!\()', mods) or re.search(r'\binternal\b', mods):
                decls.append((rel, tgt(rel), kind, name, not stack))
        opener = m and m.group(3) in ('class', 'struct', 'enum', 'protocol', 'actor') and inType
        if not m and re.match(r'^\s*(?:(?:public|package|private|fileprivate|internal)\s+)?extension\b', line) and inType: opener = True
        for ch in line:
            if ch == '{': stack.append('type' if opener else 'code'); opener = False
            elif ch == '}' and stack: stack.pop()
# identifiers used per target (other than own file's target)
used = collections.defaultdict(set)
for p, src in files.items():
    rel = os.path.relpath(p, ROOT)
    for s in set(re.findall(r'\b[A-Za-z_]\w*\b', src)): used[s].add(tgt(rel))
# external targets too (AgentHTTP, AgentFleet, agent-control ...) count as other targets
for t in ['AgentHTTP', 'AgentFleet', 'AgentCLI', 'agent-control', 'agent-bench']:
    for d, _, fs in os.walk('/work/main/Sources/' + t):
        for f in fs:
            if f.endswith('.swift'):
                for s in set(re.findall(r'\b[A-Za-z_]\w*\b', strip(open(os.path.join(d, f)).read()))): used[s].add(t)
need = collections.Counter(); tot = collections.Counter(); top = collections.Counter()
for rel, t, kind, name, toplevel in decls:
    tot[t] += 1
    others = used.get(name, set()) - {t}
    if kind == 'init': others = used.get(os.path.basename(rel).split('+')[0][:-6] if not '+' in os.path.basename(rel) else '', set()) - {t}
    if others:
        need[t] += 1
        if toplevel: top[t] += 1
print(f"{'target':18} {'implicit':>8} {'name used elsewhere':>20} {'of which top-level':>18}")
for t in order: print(f'{t:18} {tot[t]:8} {need[t]:20} {top[t]:18}')
print(f"{'total':18} {sum(tot.values()):8} {sum(need.values()):20} {sum(top.values()):18}")
