#!/usr/bin/env python3
"""Step (a) of the layer split: `git mv` each file of Sources/AgentRuntime to its layer target
as layers.txt says (pure renames, so that git follows each file's history and a branch in
flight merges with rename detection). Idempotent: files already moved are left alone.

usage: scripts/split/move.py [--dry-run]
"""
import os, subprocess, sys
import layers

dry = '--dry-run' in sys.argv
folders, files, order = layers.read()
src = os.path.join(layers.SOURCES, layers.ROOT_TARGET)
moves = []
for d, _, fs in os.walk(src):
    for f in sorted(fs):
        if not f.endswith('.swift'):
            continue
        rel = os.path.relpath(os.path.join(d, f), src)
        target = layers.target_of(rel, folders, files)
        if target == layers.ROOT_TARGET:
            continue
        moves.append((os.path.join('Sources', layers.ROOT_TARGET, rel), os.path.join('Sources', layers.destination(rel, target))))
for a, b in sorted(moves):
    print(f'{a} -> {b}')
    if not dry:
        os.makedirs(os.path.join(layers.REPO, os.path.dirname(b)), exist_ok=True)
        subprocess.run(['git', 'mv', a, b], cwd=layers.REPO, check=True)
print(f'{len(moves)} files', file=sys.stderr)
