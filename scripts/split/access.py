#!/usr/bin/env python3
"""Count declarations by access level at type scope (top level, or inside type/extension bodies, not in function bodies).
usage: access.py DIR [--by-folder]"""
import os, re, sys, collections
ROOT = sys.argv[1]
KW = r'(func|init|var|let|class|struct|enum|protocol|typealias|subscript|actor|extension|deinit|case)'
D = re.compile(r'^\s*((?:@\w+(?:\([^)]*\))?\s+|(?:public|open|package|internal|private|fileprivate)(?:\(set\))?\s+|(?:static|class|final|override|mutating|nonisolated|indirect|convenience|required|lazy|weak|unowned)\s+)*)' + KW + r'\b')
count = collections.Counter(); byf = collections.defaultdict(collections.Counter)
for d, _, fs in os.walk(ROOT):
    for f in fs:
        if not f.endswith('.swift'): continue
        p = os.path.join(d, f); fold = os.path.relpath(d, ROOT)
        stack = []  # kinds of open braces: 'type' or 'code'
        pending = None
        for line in open(p):
            s = re.sub(r'"(?:\\.|[^"\\])*"', '""', line); s = re.sub(r'//.*', '', s)
            m = D.match(s)
            inType = all(k == 'type' for k in stack)
            if m and inType:
                mods, kw = m.group(1), m.group(2)
                if kw in ('case', 'deinit'): pass
                elif kw == 'extension':
                    lvl = 'ext-public' if re.search(r'\bpublic\b', mods) else 'ext'
                else:
                    acc = re.findall(r'\b(public|open|package|internal|private|fileprivate)\b(?!\(set\))', mods)
                    a = acc[0] if acc else 'implicit'
                    if a == 'open': a = 'public'
                    count[a] += 1; byf[fold][a] += 1
            for ch in s:
                if ch == '{':
                    if m and m.group(2) in ('class', 'struct', 'enum', 'protocol', 'actor', 'extension') and inType and pending is None:
                        stack.append('type'); pending = 'used'
                    else:
                        stack.append('code')
                elif ch == '}':
                    if stack: stack.pop()
            pending = None
print(dict(count))
if '--by-folder' in sys.argv:
    for k in sorted(byf): print(f'  {k:22} ' + ' '.join(f'{a}={byf[k][a]}' for a in ('public', 'package', 'implicit', 'internal', 'private', 'fileprivate')))
