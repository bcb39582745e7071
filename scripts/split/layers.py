"""Reads layers.txt: which layer target each file of Sources/AgentRuntime goes to, and where.

layers.txt lines: `order: T1 T2 ...` (low -> high), `Folder Target` (a folder's files),
`Folder/File.swift Target` (a file that goes elsewhere than its folder). The root target
(the last of `order`) keeps its files where they are.
"""
import os
import re

# The declaration and comment/string rules of deps.py (the checker), shared by the scripts.
DECL = re.compile(r'^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate|open|final|indirect|nonisolated|static|nonisolated\(unsafe\))\s+)*'
                  r'(class|struct|enum|protocol|actor|typealias|func|let|var|extension)\s+([A-Za-z_][A-Za-z0-9_]*)')


def strip(src):
    """Source with comments removed and string literals emptied."""
    src = re.sub(r'/\*.*?\*/', ' ', src, flags=re.S)
    src = re.sub(r'"""(?:.|\n)*?"""', '""', src)
    out = []
    for line in src.split('\n'):
        line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
        line = re.sub(r'//.*', '', line)
        out.append(line)
    return '\n'.join(out)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SOURCES = os.path.join(REPO, 'Sources')
ROOT_TARGET = 'AgentRuntime'
# The old folders that were a layer of their own: their files lose that prefix
# (Sources/AgentWork/Schedule/…, not Sources/AgentWork/Work/Schedule/…).
HOME = {'AgentOutputs': 'Outputs', 'AgentSupervision': 'Supervision', 'AgentWork': 'Work',
        'AgentStore': 'Store', 'AgentCommands': 'Commands'}


def read(path=os.path.join(HERE, 'layers.txt')):
    folders, files, order = {}, {}, []
    for line in open(path):
        line = line.split('#')[0].strip()
        if not line:
            continue
        if line.startswith('order:'):
            order = line.split()[1:]
            continue
        key, target = line.split()
        (files if key.endswith('.swift') else folders)[key] = target
    return folders, files, order


def target_of(rel, folders, files):
    """The target of a file given relative to Sources/AgentRuntime (before the move)."""
    return files.get(rel) or folders.get(os.path.dirname(rel)) or ROOT_TARGET


def destination(rel, target):
    """Where a file of Sources/AgentRuntime goes, relative to Sources/."""
    if target == ROOT_TARGET:
        return os.path.join(ROOT_TARGET, rel)
    # A home folder means nothing outside its old target: Work/Memory/SQLiteMemoryStore.swift
    # goes to AgentStore/Memory/, Supervision/EventLoop.swift to AgentLoop/.
    top = rel.split('/')[0]
    if top in HOME.values():
        rel = rel[len(top) + 1:]
    return os.path.join(target, rel)


def targets(order):
    """The layer targets, low -> high, the root last."""
    return order
