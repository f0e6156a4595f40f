#!/usr/bin/env python3
"""links.py - check every relative link of README.md and doc/*.md.

    python3 tests/docs/links.py [TOP]     check TOP (default: .); exit 1
                                          and one line per broken link
    python3 tests/docs/links.py --self-test
                                          check that the checker finds a
                                          missing file and a missing anchor

A link is [text](target) outside fenced code blocks and code spans.
Absolute URLs (scheme:) are not checked. A relative target must name an
existing file or directory (relative to the file that links it); a
#fragment on a Markdown file (or alone: the same file) must be the anchor
of one of its headings, as GitHub makes them (lower case, punctuation
but '-' and '_' dropped, spaces to '-', -1, -2 ... for repeats), or of an
explicit <a id="..."> / <a name="...">.
"""

import os
import re
import sys
import tempfile

LINK = re.compile(r'!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
SCHEME = re.compile(r'^[A-Za-z][A-Za-z0-9+.-]*:')
HEADING = re.compile(r'^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$')
ANCHOR_TAG = re.compile(r'<a\s+(?:id|name)="([^"]+)"')
FENCE = re.compile(r'^ {0,3}(```|~~~)')


def prose_lines(text):
    """(line number, line) of text outside fenced code blocks."""
    fence = None
    for n, line in enumerate(text.split('\n'), 1):
        m = FENCE.match(line)
        if m:
            if fence is None:
                fence = m.group(1)
            elif m.group(1) == fence:
                fence = None
            continue
        if fence is None:
            yield n, line


def strip_code_spans(line):
    return re.sub(r'(`+)(.+?)\1', '', line)


def slug(title):
    title = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', title)  # links: their text
    title = re.sub(r'<[^>]+>', '', title)                    # html tags
    s = title.strip().lower()
    s = ''.join(c for c in s if c.isalnum() or c in ' -_')
    return s.replace(' ', '-')


def anchors(path, cache={}):
    if path not in cache:
        seen = {}
        found = set()
        with open(path, encoding='utf-8') as f:
            text = f.read()
        for _, line in prose_lines(text):
            for a in ANCHOR_TAG.findall(line):
                found.add(a)
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            k = seen.get(base, 0)
            seen[base] = k + 1
            found.add(base if k == 0 else '%s-%d' % (base, k))
        cache[path] = found
    return cache[path]


def check_file(path, top):
    """Lines 'FILE:LINE: problem' for each broken link of path."""
    bad = []
    with open(path, encoding='utf-8') as f:
        text = f.read()
    rel = os.path.relpath(path, top)
    for n, line in prose_lines(text):
        for target in LINK.findall(strip_code_spans(line)):
            if SCHEME.match(target):
                continue
            file_part, _, frag = target.partition('#')
            dest = path if file_part == '' else \
                os.path.normpath(os.path.join(os.path.dirname(path), file_part))
            if not os.path.exists(dest):
                bad.append('%s:%d: %s: no such file' % (rel, n, target))
                continue
            if frag and dest.endswith('.md') and frag not in anchors(dest):
                bad.append('%s:%d: %s: no heading with anchor #%s in %s'
                           % (rel, n, target, frag, os.path.relpath(dest, top)))
    return bad


def docs_of(top):
    files = [os.path.join(top, 'README.md')]
    d = os.path.join(top, 'doc')
    if os.path.isdir(d):
        files += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith('.md'))
    return [f for f in files if os.path.isfile(f)]


def check(top):
    bad = []
    files = docs_of(top)
    for f in files:
        bad += check_file(f, top)
    return files, bad


def self_test():
    """The checker must find each kind of broken link and pass good ones."""
    with tempfile.TemporaryDirectory() as top:
        os.mkdir(os.path.join(top, 'doc'))
        with open(os.path.join(top, 'doc', 'A.md'), 'w') as f:
            f.write('# A: the `first` part\n\n## Repeat\n\n## Repeat\n')
        good = ('[a](doc/A.md) [b](doc/A.md#a-the-first-part) '
                '[c](doc/A.md#repeat-1) [d](#top-one) [e](https://x.invalid/y) '
                '`[f](missing.md)`\n\n# Top one\n\n```\n[g](missing.md)\n```\n')
        with open(os.path.join(top, 'README.md'), 'w') as f:
            f.write(good)
        _, bad = check(top)
        if bad:
            return ['good links reported: %s' % bad]
        problems = []
        for broken in ('[x](doc/B.md)', '[x](doc/A.md#nope)', '[x](#nope)',
                       '[x](doc/A.md#repeat-2)'):
            with open(os.path.join(top, 'README.md'), 'w') as f:
                f.write(good + broken + '\n')
            _, bad = check(top)
            if len(bad) != 1:
                problems.append('%s: %d reports, expected 1' % (broken, len(bad)))
        return problems


def main(argv):
    if argv[1:] == ['--self-test']:
        problems = self_test()
        for p in problems:
            print('links.py self-test: ' + p, file=sys.stderr)
        return 1 if problems else 0
    top = argv[1] if len(argv) > 1 else '.'
    files, bad = check(top)
    for b in bad:
        print(b, file=sys.stderr)
    if bad:
        print('%d broken link(s) in README.md and doc/*.md' % len(bad), file=sys.stderr)
        return 1
    print('links: %d files, every relative link resolves' % len(files))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
