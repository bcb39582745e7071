#!/usr/bin/env python3
"""Step (c) of the layer split: `package` access on the lower layers' declarations.

Before the split every declaration without an access modifier was visible to the whole
runtime; after it, a layer's internal names are invisible to the layers above. Rather than a
compiler round-trip per layer (minutes each), this writes `package` on every type-scope and
file-scope declaration of the lower layer targets that has no access level (or `internal`):
package access is what `internal` meant in the single target, now across the targets of this
package and no further. The root target keeps `internal` (its users outside see its `public`
API; its tests use `@testable import`). Narrowing `package` back to `internal` where nothing
outside a layer uses a name is a later, optional pass.

Not touched: protocol requirements (they take no modifier), enum cases, members of `private`
/ `fileprivate` types and extensions, `public` extensions' members (already public), local
declarations inside function bodies, closures and accessors, `deinit`, operators.

usage: scripts/split/package_access.py [TARGET ...]   (default: every layer but the root)
"""
import os, re, sys
import layers

ACCESS = {'public', 'package', 'internal', 'private', 'fileprivate', 'open'}
SETTER = re.compile(r'^(?:public|package|internal|private|fileprivate)\(set\)$')
MODIFIERS = {'final', 'static', 'class', 'override', 'required', 'convenience', 'mutating', 'nonmutating',
             'lazy', 'weak', 'unowned', 'dynamic', 'indirect', 'nonisolated', 'isolated', 'optional',
             'prefix', 'postfix', 'infix', 'consuming', 'borrowing', 'distributed'}
DECL_KEYWORDS = {'func', 'var', 'let', 'init', 'subscript', 'typealias', 'struct', 'class', 'enum',
                 'actor', 'protocol', 'extension'}
TYPE_KEYWORDS = {'struct', 'class', 'enum', 'actor', 'protocol', 'extension'}


def mask(src):
    """The source with comments and string literals' contents blanked (same length, same
    newlines), so that braces and keywords in them count for nothing."""
    out = list(src)
    i, n = 0, len(src)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != '\n':
                out[k] = ' '

    def string_end(i):
        """i at the opening quote(s) (after any #s); returns the index after the literal."""
        hashes = 0
        j = i
        while j > 0 and src[j - 1] == '#':
            j -= 1
            hashes += 1
        multi = src.startswith('"""', i)
        close = ('"""' if multi else '"') + '#' * hashes
        k = i + (3 if multi else 1)
        while k < n:
            if src[k] == '\\' and hashes == 0:
                if k + 1 < n and src[k + 1] == '(':
                    # interpolation: skip to its matching paren, strings inside included
                    depth, k = 1, k + 2
                    while k < n and depth:
                        if src[k] == '"':
                            k = string_end(k)
                            continue
                        depth += {'(': 1, ')': -1}.get(src[k], 0)
                        k += 1
                    continue
                k += 2
                continue
            if src.startswith(close, k):
                return k + len(close)
            if not multi and src[k] == '\n':
                return k
            k += 1
        return n

    while i < n:
        if src.startswith('//', i):
            j = src.find('\n', i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif src.startswith('/*', i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith('/*', j):
                    depth, j = depth + 1, j + 2
                elif src.startswith('*/', j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif src[i] == '"':
            j = string_end(i)
            blank(i + 1, max(i + 1, j - 1))
            i = j
        else:
            i += 1
    return ''.join(out)


TOKEN = re.compile(r'@[A-Za-z_][A-Za-z0-9_]*(?:\([^()]*(?:\([^()]*\)[^()]*)*\))?|[A-Za-z_][A-Za-z0-9_]*(?:\([a-z]+\))?')


def declaration(masked_line):
    """For a line starting a declaration: (keyword, access or None, insert column, modifiers).
    None when the line starts no declaration."""
    pos = len(masked_line) - len(masked_line.lstrip())
    insert = None
    access = None
    mods = []
    while pos < len(masked_line):
        m = TOKEN.match(masked_line, pos)
        if not m:
            return None
        tok = m.group(0)
        if tok.startswith('@'):
            pos = m.end()
            while pos < len(masked_line) and masked_line[pos] == ' ':
                pos += 1
            continue
        if insert is None:
            insert = pos
        word = tok.split('(')[0]
        if tok in ACCESS:
            access = tok
        elif SETTER.match(tok):
            mods.append(tok)
        elif word in ('nonisolated',) or word in MODIFIERS:
            if word == 'class' and not re.match(r'class\s+(func|var|let|subscript|override|final)\b', masked_line[pos:]):
                return ('class', access, insert, mods)
            mods.append(tok)
        elif tok in DECL_KEYWORDS:
            return (tok, access, insert, mods)
        else:
            return None
        pos = m.end()
        while pos < len(masked_line) and masked_line[pos] == ' ':
            pos += 1
    return None


PRIVATE_TYPE = re.compile(r'\b(?:private|fileprivate)\s+(?:final\s+|indirect\s+)*(?:struct|class|enum|actor)\s+([A-Za-z_][A-Za-z0-9_]*)')
EXTENDED = re.compile(r'\bextension\s+([A-Za-z_][A-Za-z0-9_.]*)')


def rewrite(src):
    masked = mask(src)
    lines = src.split('\n')
    mlines = masked.split('\n')
    # Extensions of the file's private types keep their members' access.
    private_types = set(PRIVATE_TYPE.findall(masked))
    # Scope stack: 'file', 'type' (members get package), 'skip' (private type, public or
    # private extension: members keep what they have), 'protocol', 'code'.
    stack = ['file']
    pending = None          # the scope kind the next '{' opens, set by a type declaration
    edits = 0
    for li, mline in enumerate(mlines):
        scope = stack[-1]
        stripped = mline.strip()
        if scope in ('file', 'type') and pending is None and stripped and not stripped.startswith('#'):
            d = declaration(mline)
            if d:
                keyword, access, col, mods = d
                if keyword in TYPE_KEYWORDS:
                    if keyword == 'protocol':
                        pending = 'protocol'
                    elif keyword == 'extension':
                        m = EXTENDED.search(mline)
                        extended = m.group(1).split('.')[-1] if m else ''
                        private = extended in private_types
                        pending = 'type' if access in (None, 'internal', 'package') and not private else 'skip'
                    else:
                        pending = 'skip' if access in ('private', 'fileprivate') else 'type'
                if keyword != 'extension' and access in (None, 'internal'):
                    line = lines[li]
                    if access == 'internal':
                        lines[li] = re.sub(r'\binternal\b', 'package', line, count=1)
                    else:
                        lines[li] = line[:col] + 'package ' + line[col:]
                    edits += 1
                elif keyword == 'extension' and access == 'internal':
                    lines[li] = re.sub(r'\binternal\s+', '', lines[li], count=1)
        # Braces of this line (strings and comments are masked).
        for ch in mline:
            if ch == '{':
                stack.append(pending or 'code')
                pending = None
            elif ch == '}':
                if len(stack) > 1:
                    stack.pop()
        if pending and stripped.endswith('}'):
            pending = None
    return '\n'.join(lines), edits


def main():
    folders, files, order = layers.read()
    targets = sys.argv[1:] or [t for t in order if t != layers.ROOT_TARGET]
    total = 0
    for t in targets:
        for d, _, fs in os.walk(os.path.join(layers.SOURCES, t)):
            for f in sorted(fs):
                if not f.endswith('.swift'):
                    continue
                p = os.path.join(d, f)
                src = open(p).read()
                out, edits = rewrite(src)
                if out != src:
                    open(p, 'w').write(out)
                total += edits
    print(f'{total} declarations made package', file=sys.stderr)


if __name__ == '__main__':
    main()
