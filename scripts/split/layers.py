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
    """Source with comments removed and string literals emptied, keeping the code of their
    interpolations (`"\\(ProcessPolicy.format(x)) s"` names ProcessPolicy)."""
    out, i, n = [], 0, len(src)

    def literal(i):
        """i at the opening quote; appends the literal's interpolations; returns its end."""
        hashes = 0
        while i - hashes > 0 and src[i - hashes - 1] == '#':
            hashes += 1
        multi = src.startswith('"""', i)
        close = ('"""' if multi else '"') + '#' * hashes
        escape = '\\' + '#' * hashes
        k = i + (3 if multi else 1)
        out.append('""')
        while k < n:
            if src.startswith(escape + '(', k):
                depth, k = 1, k + len(escape) + 1
                start = k
                while k < n and depth:
                    if src[k] == '"':
                        out.append(' ' + src[start:k] + ' ')
                        k = literal(k)
                        start = k
                        continue
                    depth += {'(': 1, ')': -1}.get(src[k], 0)
                    k += 1
                out.append(' ' + src[start:k - 1] + ' ')
                continue
            if src.startswith(escape, k):
                k += len(escape) + 1
                continue
            if src.startswith(close, k):
                return k + len(close)
            if not multi and src[k] == '\n':
                return k
            if src[k] == '\n':
                out.append('\n')
            k += 1
        return n

    while i < n:
        if src.startswith('//', i):
            j = src.find('\n', i)
            i = n if j < 0 else j
        elif src.startswith('/*', i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith('/*', j):
                    depth, j = depth + 1, j + 2
                elif src.startswith('*/', j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(' ' + '\n' * src.count('\n', i, j))
            i = j
        elif src[i] == '"':
            i = literal(i)
        else:
            out.append(src[i])
            i += 1
    return ''.join(out)


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
