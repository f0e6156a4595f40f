#!/usr/bin/env python3
"""commands.py - run every command shown in README.md and doc/*.md.

    python3 tests/docs/commands.py BUILD [TOP]   run them; exit 1 and say
                                                 which block failed
    python3 tests/docs/commands.py --list [TOP]  print the blocks, run none
    python3 tests/docs/commands.py --self-test   check that a failing
                                                 command and a bad marker
                                                 are caught

A command block is a fenced block whose info string is `sh`. Each block
runs with `sh -eu` (every line must succeed; a pipeline is judged by its
last command, as sh does), the blocks of one document one after another in
one scratch directory, so a later block may read what an earlier one
wrote. The scratch directory is what the documents assume of a clone after
`make`:

  - every top-level entry of TOP (Makefile, mk/, tests/, doc/ ...) linked,
    and `build` linked to BUILD: `build/rte-run`, `$PWD/build/librte.so`;
  - `rte-read` and `rte-run` on PATH (as after `make install`);
  - `./app`, a traced program (the demo, build/demo/rte-demo);
  - `4242.events`, the file of a finished OCaml 5.2 program (a fixture:
    tests/fixtures/ocaml-5.2/gc), so that `rte-read 4242` finds it;
  - OCAML_RUNTIME_EVENTS_DIR unset, XDG_RUNTIME_DIR a private directory
    (the default directory of ring files is empty but for what the
    commands write).

In a sanitizer build (RTE_SAN set by make) nothing is run: an
uninstrumented command cannot preload that build's librte.so.

A block that cannot run here (it installs into the system, serves until
stopped, needs a server or a tool that is not a dependency, or is the test
suite itself) carries the line

    <!-- not-run: WHY -->

just before its opening fence; WHY must be given. Keep them few.
"""

import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile

FENCE = re.compile(r'^ {0,3}(```|~~~)\s*(\S*)')
MARK = re.compile(r'^<!-- not-run: (.*\S) -->$')
BLOCK_SECS = 300  # a bound against a hang, not a timing assertion


def blocks(path):
    """(line, text, why-not-run or None) for every sh block of path."""
    lines = open(path, encoding='utf-8').read().split('\n')
    out = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group(1), m.group(2)
        j = i + 1
        while j < len(lines) and not lines[j].lstrip().startswith(fence):
            j += 1
        if info == 'sh':
            prev = lines[i - 1] if i > 0 else ''
            why = None
            if prev.startswith('<!-- not-run'):
                mm = MARK.match(prev)
                if not mm:
                    raise SystemExit('%s:%d: a not-run marker must say why: '
                                     '<!-- not-run: WHY -->' % (path, i))
                why = mm.group(1)
            out.append((i + 1, '\n'.join(lines[i + 1:j]), why))
        i = j + 1
    return out


def documents(top):
    docs = [os.path.join(top, 'README.md')]
    d = os.path.join(top, 'doc')
    docs += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith('.md'))
    return docs


def playground(top, build, where):
    """The scratch directory of one document (see the module comment)."""
    os.makedirs(where)
    for e in os.listdir(top):
        if e in ('build', '.git') or e.startswith('build-'):
            continue
        os.symlink(os.path.join(top, e), os.path.join(where, e))
    os.symlink(build, os.path.join(where, 'build'))
    shutil.copy(os.path.join(build, 'demo', 'rte-demo'), os.path.join(where, 'app'))
    # the demo's rpath is $ORIGIN/..: a copy finds librte.so through build/
    fix = os.path.join(top, 'tests/fixtures/ocaml-5.2/gc/31472.events.gz')
    with gzip.open(fix) as z, open(os.path.join(where, '4242.events'), 'wb') as f:
        f.write(z.read())
    xdg = os.path.join(where, '.xdg')
    os.makedirs(xdg, mode=0o700)
    env = dict(os.environ)
    env.pop('OCAML_RUNTIME_EVENTS_DIR', None)
    env.pop('OCAML_RUNTIME_EVENTS_START', None)
    env.pop('LD_PRELOAD', None)
    env['XDG_RUNTIME_DIR'] = xdg
    env['PATH'] = build + os.pathsep + env.get('PATH', '')
    env['LD_LIBRARY_PATH'] = build
    return env


def run_all(top, build, tmp):
    bad = 0
    for doc in documents(top):
        bs = blocks(doc)
        if not bs:
            continue
        name = os.path.relpath(doc, top)
        where = os.path.join(tmp, name.replace('/', '_'))
        env = playground(top, build, where)
        for line, text, why in bs:
            if why:
                print('skip: %s:%d (not-run: %s)' % (name, line, why))
                continue
            try:
                r = subprocess.run(['sh', '-euc', text], cwd=where, env=env,
                                   stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT,
                                   timeout=BLOCK_SECS)
                rc, out = r.returncode, r.stdout.decode('utf-8', 'replace')
            except subprocess.TimeoutExpired as e:
                rc, out = 'timeout', (e.stdout or b'').decode('utf-8', 'replace')
            if rc == 0:
                print('ok: %s:%d' % (name, line))
            else:
                bad += 1
                print('FAIL: %s:%d exited %s:\n%s\n--- its output (last 40 lines):\n%s'
                      % (name, line, rc, text,
                         '\n'.join(out.rstrip().split('\n')[-40:])))
    return bad


def self_test():
    with tempfile.TemporaryDirectory() as t:
        os.makedirs(os.path.join(t, 'doc'))
        with open(os.path.join(t, 'README.md'), 'w') as f:
            f.write('x\n```sh\ntrue\nfalse\ntrue\n```\n')
        with open(os.path.join(t, 'doc', 'A.md'), 'w') as f:
            f.write('<!-- not-run: a server -->\n```sh\nfalse\n```\n'
                    '```c\nnot a command\n```\n')
        r = [blocks(d) for d in documents(t)]
        assert [len(b) for b in r] == [1, 1], r
        assert r[1][0][2] == 'a server', r
        out = subprocess.run(['sh', '-euc', r[0][0][1]]).returncode
        assert out != 0, 'a failing line in the middle passed'
        with open(os.path.join(t, 'doc', 'A.md'), 'w') as f:
            f.write('<!-- not-run -->\n```sh\nfalse\n```\n')
        try:
            blocks(os.path.join(t, 'doc', 'A.md'))
        except SystemExit:
            pass
        else:
            raise AssertionError('a marker without a reason was taken')
    print('commands.py self-test: ok')


def main(argv):
    if argv[1:2] == ['--self-test']:
        self_test()
        return 0
    if argv[1:2] == ['--list']:
        top = argv[2] if len(argv) > 2 else '.'
        for doc in documents(top):
            for line, text, why in blocks(doc):
                print('== %s:%d%s\n%s' % (doc, line, ' (not-run: %s)' % why if why else '', text))
        return 0
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    if os.environ.get('RTE_SAN'):
        # A sanitizer build's librte.so needs its runtime loaded first:
        # the documents' commands (make, sh under rte-run) are not.
        print('doc commands: skipped in a sanitizer build (RTE_SAN=%s); '
              'make test checks them' % os.environ['RTE_SAN'])
        return 0
    build = os.path.abspath(argv[1])
    top = os.path.abspath(argv[2] if len(argv) > 2 else '.')
    with tempfile.TemporaryDirectory(prefix='rte-doc-commands.') as tmp:
        bad = run_all(top, build, tmp)
    print('doc commands: %s' % ('all ran' if not bad else '%d block(s) failed' % bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
