#!/usr/bin/env python3
"""Fails when a Swift file under Sources/ uses a name that exists on only one platform outside a guarded block.

usage: check-portability.py [--self-test] [REPO]     (REPO defaults to the repository holding this script)

Rules (Sources/CacheSystem, the C system layer, is where platform differences belong and is not scanned):
  1. A Linux-only name (LINUX below) is allowed only inside an `#if` branch whose condition names Linux
     (canImport(Glibc) / os(Linux) / ...) of a chain that also has a Darwin branch or an `#else`; a Darwin-only
     name (DARWIN) likewise the other way round. Module-qualified calls (`Glibc.open`, `Darwin.close`) count.
  2. `import FoundationNetworking` / `import CCurl` only inside `#if canImport(<that module>)`.
  3. The library targets built on the system layer (LAYERED) import neither Glibc nor Darwin at all: their
     POSIX calls go through CacheSystem.
--self-test runs the check on Tests/Fixtures/portability/: Forbidden.swift must be reported once per listed
name (each line ending in `// expect: NAME`), Allowed.swift not at all.
Exit status 1 when a problem is found (or the self-test fails)."""
import os
import re
import sys

LINUX = {
    'Glibc.': r'\bGlibc\.', 'import Glibc': r'^\s*import\s+Glibc\b', 'st_mtim': r'\bst_mtim\b',
    'st_ctim': r'\bst_ctim\b', 'st_atim': r'\bst_atim\b', 'CLOCK_*_COARSE': r'\bCLOCK_\w+_COARSE\b',
    'O_TMPFILE': r'\bO_TMPFILE\b', 'O_PATH': r'\bO_PATH\b', 'MSG_NOSIGNAL': r'\bMSG_NOSIGNAL\b',
    'SOCK_CLOEXEC': r'\bSOCK_CLOEXEC\b', 'epoll': r'\bepoll\w*', 'inotify': r'\binotify\w*',
    'sendfile': r'\bsendfile\b', 'fallocate': r'\bfallocate\b', 'memfd': r'\bmemfd\w*', 'statx': r'\bstatx\b',
    'renameat2': r'\brenameat2\b', 'syncfs': r'\bsyncfs\b', 'SO_REUSEPORT': r'\bSO_REUSEPORT\b',
    'Musl.': r'\bMusl\.',
}
DARWIN = {
    'Darwin.': r'\bDarwin\.', 'import Darwin': r'^\s*import\s+Darwin\b', 'st_mtimespec': r'\bst_mtimespec\b',
    'st_ctimespec': r'\bst_ctimespec\b', 'st_atimespec': r'\bst_atimespec\b', 'F_FULLFSYNC': r'\bF_FULLFSYNC\b',
    'SO_NOSIGPIPE': r'\bSO_NOSIGPIPE\b', 'kqueue': r'\bkqueue\b', 'clock_gettime_nsec_np': r'\bclock_gettime_nsec_np\b',
    'CLOCK_UPTIME_RAW': r'\bCLOCK_UPTIME_RAW\b', 'mach_absolute_time': r'\bmach_absolute_time\b',
}
GUARDED_IMPORTS = {'FoundationNetworking': r'^\s*import\s+FoundationNetworking\b', 'CCurl': r'^\s*import\s+CCurl\b'}
LINUX_CONDITION = re.compile(r'canImport\((Glibc|Musl|FoundationNetworking|CCurl)\)|os\(Linux\)')
DARWIN_CONDITION = re.compile(r'canImport\((Darwin|UIKit|AppKit|WatchKit)\)|os\((macOS|iOS|tvOS|watchOS|visionOS)\)'
                              r'|_runtime\(_ObjC\)')
LAYER = os.path.join('Sources', 'CacheSystem')
LAYERED = [os.path.join('Sources', name) for name in ('CacheStore', 'DownloadCache', 'ModelCache')]


def strip_comment(line):
    """The code part of a line: drops `//` comments and string literals (so a name in text is not a use)."""
    line = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
    return line.split('//', 1)[0]


def branches(lines):
    """For each line, the enclosing `#if` branches as (condition, all conditions of that chain), outermost first."""
    chains, stack, result = [], [], []
    for number, raw in enumerate(lines):
        text = raw.strip()
        if text.startswith('#if '):
            chain = {'conditions': [text[4:]]}
            chains.append(chain)
            stack.append(chain)
        elif text.startswith('#elseif ') and stack:
            stack[-1]['conditions'].append(text[8:])
        elif text.startswith('#else') and stack:
            stack[-1]['conditions'].append('#else')
        elif text.startswith('#endif') and stack:
            stack.pop()
        result.append([(len(chain['conditions']) - 1, chain['conditions']) for chain in stack])
    # A chain's later branches are known only at its end: the lists are shared, so read them now.
    return [[(conditions[index], index, list(conditions)) for index, conditions in entry] for entry in result]


def allowed(enclosing, platform):
    own, other = (LINUX_CONDITION, DARWIN_CONDITION) if platform == 'linux' else (DARWIN_CONDITION, LINUX_CONDITION)
    for current, index, conditions in enclosing:
        others = conditions[:index] + conditions[index + 1:]
        if current != '#else' and own.search(current) and not current.lstrip().startswith('!'):
            if any(c == '#else' or other.search(c) for c in others):
                return True
        if current == '#else' and any(other.search(c) for c in others):
            return True
    return False


def scan_file(path, relative):
    problems = []
    lines = open(path, encoding='utf-8', errors='replace').read().split('\n')
    context = branches(lines)
    layered = any(relative.startswith(prefix + os.sep) for prefix in LAYERED)
    for number, raw in enumerate(lines):
        code = strip_comment(raw)
        if code.strip().startswith('#'):
            continue
        for platform, names in (('linux', LINUX), ('darwin', DARWIN)):
            for name, pattern in names.items():
                if re.search(pattern, code) is None:
                    continue
                if layered and name in ('import Glibc', 'import Darwin', 'Glibc.', 'Darwin.'):
                    problems.append((relative, number + 1, name, 'use the CacheSystem layer in library targets'))
                elif not allowed(context[number], platform):
                    problems.append((relative, number + 1, name, f'{platform}-only name outside an #if with both '
                                     'platform branches'))
        for module, pattern in GUARDED_IMPORTS.items():
            if re.search(pattern, code) and not any(f'canImport({module})' in current for current, _, _ in context[number]):
                problems.append((relative, number + 1, f'import {module}', f'not inside #if canImport({module})'))
    return problems


def scan_repo(repo):
    problems = []
    for directory, _, names in os.walk(os.path.join(repo, 'Sources')):
        relative_dir = os.path.relpath(directory, repo)
        if relative_dir == LAYER or relative_dir.startswith(LAYER + os.sep):
            continue
        for name in sorted(names):
            if name.endswith('.swift'):
                path = os.path.join(directory, name)
                problems += scan_file(path, os.path.relpath(path, repo))
    return problems


def self_test(repo):
    fixtures = os.path.join(repo, 'Tests', 'Fixtures', 'portability')
    failures = []
    forbidden = os.path.join(fixtures, 'Forbidden.swift')
    found = scan_file(forbidden, 'Forbidden.swift')
    lines = open(forbidden, encoding='utf-8').read().split('\n')
    expected = {}
    for number, line in enumerate(lines, start=1):
        match = re.search(r'// expect: (.+)$', line)
        if match:
            expected[number] = match.group(1).strip()
    reported = {}
    for _, number, name, _ in found:
        reported.setdefault(number, set()).add(name)
    for number, name in expected.items():
        if name not in reported.get(number, set()):
            failures.append(f'Forbidden.swift:{number}: {name} was not reported')
    for number, names in reported.items():
        if number not in expected:
            failures.append(f'Forbidden.swift:{number}: unexpected report {sorted(names)}')
    every = set(LINUX) | set(DARWIN) | {f'import {m}' for m in GUARDED_IMPORTS}
    missing = every - set(expected.values())
    if missing:
        failures.append(f'Forbidden.swift lacks a line for {sorted(missing)}')
    for _, number, name, why in scan_file(os.path.join(fixtures, 'Allowed.swift'), 'Allowed.swift'):
        failures.append(f'Allowed.swift:{number}: {name} reported ({why})')
    layered = scan_file(os.path.join(fixtures, 'Allowed.swift'),
                        os.path.join('Sources', 'CacheStore', 'Allowed.swift'))
    if not any(name == 'import Glibc' for _, _, name, _ in layered):
        failures.append('a guarded import Glibc in a library target built on CacheSystem was not reported')
    for failure in failures:
        print(failure)
    print('self-test: ' + ('ok' if not failures else f'{len(failures)} failure(s)'))
    return not failures


def main(argv):
    test = '--self-test' in argv
    rest = [a for a in argv if a != '--self-test']
    repo = rest[0] if rest else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if test:
        return 0 if self_test(repo) else 1
    problems = scan_repo(repo)
    for relative, number, name, why in problems:
        print(f'{relative}:{number}: {name}: {why}')
    print(f'{len(problems)} portability problem(s)')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
