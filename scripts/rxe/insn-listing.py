#!/usr/bin/env python3
"""Where one segment of an instruction count went, down to the machine code.

A harness run with RXE_INSN_CODE=1 (RXE_PARTS=insn scripts/rxe/run-guest-tests.sh) leaves in
provider-ofa-bundle/target/rxe/ the plugin's output with each block's machine code
(insn-plugin.txt, see insn-count-plugin.c) and the JIT's perf map of the counting JVM (perf.map).

  insn-listing.py <insn-plugin.txt> <perf.map> <segment> [<method>] [--iters N]

A segment is what ran between marker <segment>-1 and marker <segment>. InstructionCountBench marks
four times per block and size (before and after DAT, before and after bare verbs), 2 B first: with
three blocks, the last 2 B block of DAT is segment 18 and its bare-verbs block segment 20.

Without <method>, prints per iteration (a round trip; --iters, 2000 by default) the user-mode
instructions and blocks run, how many of the instructions read or write memory, are atomic, or end a
block in a return or an indirect branch (under an emulated CPU these cost most), how many blocks
were entered through a lookup (the plugin's L lines), and the compiled methods and libraries they
ran in. With <method> (a part of a perf map name, such as
SendQueue.post), lists that method's blocks with their runs per iteration and disassembly
(objdump, from binutils).
"""
import bisect
import collections
import os
import re
import subprocess
import sys
import tempfile


def read_segment(path, segment):
    """The segment's blocks: {address: [runs, instructions, code, lookups]}."""
    blocks, lookups, current = {}, collections.Counter(), None
    with open(path) as f:
        for line in f:
            if line.startswith('M '):
                current = int(line.split()[1])
                if current > segment:
                    break
            elif current == segment and line.startswith('B '):
                fields = line.split()
                if len(fields) < 5:
                    sys.exit('the plugin wrote no machine code: run the harness with RXE_INSN_CODE=1')
                address = int(fields[1], 16)
                block = blocks.setdefault(address, [0, int(fields[2]), fields[4], 0])
                block[0] += int(fields[3])
            elif current == segment and line.startswith('L '):
                fields = line.split()
                lookups[int(fields[1], 16)] += int(fields[2])
    if not blocks:
        sys.exit('segment %d has no blocks in %s' % (segment, path))
    for address, n in lookups.items():
        if address in blocks:
            blocks[address][3] += n
    return blocks


def read_perf_map(path):
    symbols = []
    with open(path) as f:
        for line in f:
            fields = line.split(' ', 2)
            if len(fields) == 3:
                symbols.append((int(fields[0], 16), int(fields[1], 16), fields[2].strip()))
    symbols.sort()
    return symbols


def symbol(symbols, starts, address):
    i = bisect.bisect_right(starts, address) - 1
    if i >= 0 and address < symbols[i][0] + symbols[i][1]:
        return symbols[i][2]
    return 'native code at %#x' % (address >> 20 << 20)


def short_name(name):
    """Class.method of a perf map entry such as 'void org.example.Class.method(int)'."""
    paren = name.find('(')
    if paren < 0:
        return name
    qualified = name[name.rfind(' ', 0, paren) + 1:paren]
    parts = qualified.split('.')
    return '.'.join(parts[-2:])


def disassemble(address, code):
    with tempfile.NamedTemporaryFile(suffix='.bin', delete=False) as f:
        f.write(bytes.fromhex(code))
    try:
        out = subprocess.run(['objdump', '-D', '-b', 'binary', '-mi386:x86-64', '--adjust-vma=%#x' % address,
                              f.name], capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(f.name)
    lines = []
    for line in out.splitlines():
        fields = line.split('\t')
        if line.startswith('  ') and len(fields) >= 3:
            lines.append((fields[0].strip().rstrip(':'), fields[2].strip()))
    return lines


def kinds(instructions):
    """What the instructions of one block are, counted."""
    c = collections.Counter()
    for _, text in instructions:
        if '(' in text and not text.startswith(('lea', 'nop')):
            c['memory'] += 1
        if text.startswith('lock') or (text.startswith('xchg') and '(' in text):
            c['atomic'] += 1
    last = instructions[-1][1] if instructions else ''
    if last.startswith('ret'):
        c['return'] += 1
    elif re.match(r'(call|jmp)\w*\s+\*', last):
        c['indirect'] += 1
    return c


def main(argv):
    iters = 2000
    if '--iters' in argv:
        i = argv.index('--iters')
        iters = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    if len(argv) not in (4, 5):
        sys.exit(__doc__)
    blocks = read_segment(argv[1], int(argv[3]))
    symbols = read_perf_map(argv[2])
    starts = [s[0] for s in symbols]
    if len(argv) == 5:
        total = 0.0
        for address in sorted(blocks):
            runs, n, code, lookups = blocks[address]
            if argv[4] not in symbol(symbols, starts, address):
                continue
            total += runs * n / iters
            print('--- block %x: %.2f runs (%.2f entered by a lookup), %d instructions, %.1f per iteration'
                  % (address, runs / iters, lookups / iters, n, runs * n / iters))
            for at, text in disassemble(address, code):
                print('  %s  %s' % (at, text))
        print('%s: %.1f instructions per iteration' % (argv[4], total))
        return
    counts, where, looked = collections.Counter(), collections.Counter(), collections.Counter()
    runs_total = instructions = 0
    for address, (runs, n, code, lookups) in blocks.items():
        for kind, k in kinds(disassemble(address, code)).items():
            counts[kind] += k * runs
        runs_total += runs
        instructions += n * runs
        name = short_name(symbol(symbols, starts, address))
        where[name] += n * runs
        looked[name] += lookups
    print('per iteration: %.0f instructions in %.0f blocks; %.0f read or write memory, %.1f atomic, '
          '%.1f blocks end in a return, %.1f in an indirect branch'
          % (instructions / iters, runs_total / iters, counts['memory'] / iters, counts['atomic'] / iters,
             counts['return'] / iters, counts['indirect'] / iters))
    print('%.1f blocks entered by a lookup (after a return, an indirect branch, or from a block that starts on '
          'another page)' % (sum(looked.values()) / iters))
    print('  instructions  lookups  where')
    for name, n in where.most_common(15):
        print('  %12.1f  %7.1f  %s' % (n / iters, looked[name] / iters, name))


if __name__ == '__main__':
    main(sys.argv)
