#!/usr/bin/env python3
"""Step (b) of the layer split: writes the `import` lines each file needs after the move.

For every Swift file of the layer targets and of their users (AgentHTTP, AgentFleet,
AgentCLI, agent-control, agent-bench, the tests, the fuzz harnesses), finds the layer targets
whose top-level declarations it names (identifier match on code without comments and
strings) and adds `import <Target>` for each (`@testable import` in tests and fuzz harnesses,
as they had for AgentRuntime). A file of a layer target may import only lower layers: a name
of a higher one is reported as a back-edge and the script fails. Outside the layers, an
`import AgentRuntime` naming nothing of the root any more is dropped.

usage: scripts/split/imports.py [--check]   (--check: change nothing, list what would change)
"""
import os, re, sys
import layers

from layers import strip, DECL

IDENT = re.compile(r'\b[A-Za-z_][A-Za-z0-9_]*\b')
IMPORT = re.compile(r'^((?:@\w+(?:\([^)]*\))?\s+)*)import\s+(?:(?:struct|class|enum|protocol|func|var|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)')
USERS = ['Sources/AgentHTTP', 'Sources/AgentFleet', 'Sources/AgentCLI', 'Sources/AgentControlCLI', 'Sources/agent-control',
         'Sources/agent-bench', 'Tests', 'Fuzz/Sources']
TESTABLE = ('Tests/', 'Fuzz/')

folders, files, order = layers.read()
rank = {t: i for i, t in enumerate(order)}


def swift_files(top):
    for d, _, fs in os.walk(os.path.join(layers.REPO, top)):
        if '/.build' in d:
            continue
        for f in sorted(fs):
            if f.endswith('.swift'):
                yield os.path.relpath(os.path.join(d, f), layers.REPO)


# Top-level declarations of each layer target.
declared = {}
owner = {}
for t in order:
    for rel in swift_files(os.path.join('Sources', t)):
        owner[rel] = t
        for line in strip(open(os.path.join(layers.REPO, rel)).read()).split('\n'):
            if not line or line[:1].isspace():
                continue
            m = DECL.match(line)
            if m and m.group(1) != 'extension':
                declared.setdefault(m.group(2), set()).add(t)


def needed(rel, own):
    src = strip(open(os.path.join(layers.REPO, rel)).read())
    # A name the file declares itself (a private nested `Readiness`) is its own, not the
    # layer's of the same name; a name declared in two layers counts for each.
    own_names = {m.group(2) for m in (DECL.match(line.strip()) for line in src.split('\n')) if m}
    used = set()
    for name in set(IDENT.findall(src)) - own_names:
        for t in declared.get(name, ()):
            if t != own:
                used.add(t)
    return used


def rewrite(rel, want, drop_root):
    """Adds `import T` for each wanted target the file lacks (and drops `import AgentRuntime`
    when asked); returns whether the file changed."""
    path = os.path.join(layers.REPO, rel)
    lines = open(path).read().split('\n')
    testable = rel.startswith(TESTABLE)
    changed = False
    if drop_root and not testable:
        kept = [line for line in lines if not (IMPORT.match(line) and IMPORT.match(line).group(2) == 'AgentRuntime')]
        changed = len(kept) != len(lines)
        lines = kept
    present = {IMPORT.match(line).group(2) for line in lines if IMPORT.match(line)}
    for t in sorted(want - present):
        text = ('@testable import ' if testable else 'import ') + t
        # Before the first import that sorts after it, else after the last import.
        idx = [i for i, line in enumerate(lines) if IMPORT.match(line)]
        at = next((i for i in idx if IMPORT.match(lines[i]).group(2) > t), None)
        if at is None:
            at = idx[-1] + 1 if idx else 0
        lines.insert(at, text)
        changed = True
    if changed:
        open(path, 'w').write('\n'.join(lines))
    return changed


check = '--check' in sys.argv
bad = []
changes = 0
for rel, own in sorted(owner.items()):
    want = needed(rel, own)
    higher = {t for t in want if rank[t] > rank[own]}
    if higher:
        bad.append(f'{rel} ({own}) names {", ".join(sorted(higher))}')
    want -= higher
    if check:
        continue
    if rewrite(rel, want, False):
        changes += 1
for top in USERS:
    for rel in swift_files(top):
        want = needed(rel, None)
        drop = 'AgentRuntime' not in want
        if check:
            continue
        want.discard('AgentRuntime') if drop else None
        src = open(os.path.join(layers.REPO, rel)).read()
        imported = {m.group(2) for m in (IMPORT.match(line) for line in src.split('\n')) if m}
        if not imported & set(order):
            # A file that imports neither AgentRuntime nor a layer saw none of them: it
            # needs no layer (a re-run keeps serving the files whose root import it dropped).
            continue
        if rewrite(rel, want, drop):
            changes += 1
for b in bad:
    print('BACK-EDGE', b)
print(f'{changes} files changed', file=sys.stderr)
sys.exit(1 if bad else 0)
