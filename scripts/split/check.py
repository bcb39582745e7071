#!/usr/bin/env python3
"""After the split: each layer target's size and the arrows its files' imports draw, and a
check that they point down only (a cycle needs an arrow up). The compiler holds the same
arrows through Package.swift; this says where one would go wrong before a build does, also
for a name used without its import (see imports.py --check).

usage: scripts/split/check.py
"""
import collections, os, re, sys
import layers

folders, files, order = layers.read()
rank = {t: i for i, t in enumerate(order)}
others = ['AgentHTTP', 'AgentFleet', 'AgentCLI']
IMPORT = re.compile(r'^(?:@\w+\s+)*import\s+(\w+)', re.M)
size, arrows = collections.Counter(), collections.defaultdict(set)
up = []
for t in order + others:
    for d, _, fs in os.walk(os.path.join(layers.SOURCES, t)):
        for f in fs:
            if not f.endswith('.swift'):
                continue
            p = os.path.join(d, f)
            src = open(p).read()
            size[t] += src.count('\n')
            for m in IMPORT.finditer(src):
                u = m.group(1)
                if u in rank and u != t:
                    arrows[t].add(u)
                    if t in rank and rank[u] > rank[t]:
                        up.append(f'{os.path.relpath(p, layers.REPO)}: {t} imports {u}')
print('target             lines  imports (layers)')
for t in order + others:
    print(f'{t:18} {size[t]:6}  {", ".join(sorted(arrows[t], key=lambda u: -rank[u]))}')
for line in up:
    print('UP', line)
print(f'{len(up)} arrows up' if up else 'no arrow up: no cycle between the layers')
sys.exit(1 if up else 0)
