#!/usr/bin/env python3
"""Recompute the has_payload md5 of every record of a TORCH_TRACE log after its payloads were edited
(user paths rewritten in fixtures). Usage: fix-trace-md5.py LOG... (rewrites in place)."""
import hashlib, re, sys

PAT = re.compile(r'"has_payload": "([0-9a-f]{32})"')

def fix(path):
    lines = open(path, encoding='utf-8').read().split('\n')
    out, i, changed = [], 0, 0
    while i < len(lines):
        line = lines[i]
        m = PAT.search(line)
        j = i + 1
        while j < len(lines) and lines[j].startswith('\t'):
            j += 1
        if m:
            payload = '\n'.join(l[1:] for l in lines[i + 1:j])
            md5 = hashlib.md5(payload.encode('utf-8')).hexdigest()
            if md5 != m.group(1):
                line = line[:m.start(1)] + md5 + line[m.end(1):]
                changed += 1
        out.append(line)
        out.extend(lines[i + 1:j])
        i = j
    open(path, 'w', encoding='utf-8').write('\n'.join(out))
    print(f'{path}: {changed} md5 updated')

for p in sys.argv[1:]:
    fix(p)
