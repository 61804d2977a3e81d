#!/usr/bin/env python3
"""Where a throughput run's CPU goes, by category, per gigabit carried (docs/benchmarks.md, "wireguard, session 13").

Usage: bench/perf-categories.py LABEL=DIR [LABEL=DIR ...]
  DIR is what bench/pod-profile.sh leaves: perf.txt (`perf script -F comm,pid,tid,ip,sym` of a system-wide
  `perf record -g`), pids (the two flanneld processes), gbit_s (the run's throughput) and seconds (how long perf
  recorded). Prints one column per run: milliseconds of CPU (the whole machine) per gigabit delivered.

Each sample is put in the first category that matches, from the outermost frames in:
  the daemons' samples by what they were doing (a system call with the network stack's work that runs in it, the
  AEAD's intrinsic stubs, the AEAD engine's Java, array copies, ...); the pods' iperf3 (their TCP work in softirq
  included); idle; everything else on the machine (the bench's own processes, etcd, ...) as "other processes".
perf samples here are timer-driven (a VM has no PMU): time with interrupts off is charged where they come back
on, so the kernel's categories are right and its leaf functions are not.
"""
import collections
import os
import sys

KERNEL = [  # (frame anywhere in the stack, category): the first match wins
    ('tun_chr_write_iter', 'kernel: TUN write (+ the pod path in softirq)'),
    ('tun_chr_read_iter', 'kernel: TUN read'),
    ('__sys_sendmmsg', 'kernel: sendmmsg/sendmsg (+ the underlay in softirq)'),
    ('__sys_sendmsg', 'kernel: sendmmsg/sendmsg (+ the underlay in softirq)'),
    ('do_recvmmsg', 'kernel: recvmmsg'),
    ('do_futex', 'waits and wake-ups (futex, poll, scheduler)'),
    ('do_sys_poll', 'waits and wake-ups (futex, poll, scheduler)'),
    ('schedule', 'waits and wake-ups (futex, poll, scheduler)'),
    ('handle_softirqs', 'softirqs at interrupt exit'),
    ('clock_gettime', 'clock (System.nanoTime)'),
]
JAVA = [  # (substring of the leaf Java method, category)
    ('crypto.IntrinsicEngine', 'AEAD engine: Java (XOR, keys, tag)'),
    ('crypto.Poly64Engine', 'AEAD engine: Java (XOR, keys, tag)'),
    ('crypto.ChaCha20Stream', 'AEAD engine: Java (XOR, keys, tag)'),
    ('crypto.Poly1305x64', 'AEAD engine: Poly1305 in Java (radix 2^64)'),
    ('packet.Checksum', 'segmenting, checksums, coalescing'),
    ('packet.TcpSegmenter', 'segmenting, checksums, coalescing'),
    ('packet.TrainCoalescer', 'segmenting, checksums, coalescing'),
    ('org.jflannel', 'other daemon Java (protocol, queues, workers, readers)'),
    ('java.', 'other daemon Java (protocol, queues, workers, readers)'),
    ('jdk.', 'other daemon Java (protocol, queues, workers, readers)'),
]
ORDER = ['AEAD intrinsics (ChaCha20, Poly1305 stubs)', 'AEAD engine: Java (XOR, keys, tag)',
         'AEAD engine: Poly1305 in Java (radix 2^64)', 'AEAD engine: array copies',
         'other array copies (kernel buffers <-> heap)', 'segmenting, checksums, coalescing',
         'other daemon Java (protocol, queues, workers, readers)', 'clock (System.nanoTime)',
         'kernel: TUN read', 'kernel: sendmmsg/sendmsg (+ the underlay in softirq)', 'kernel: recvmmsg',
         'kernel: TUN write (+ the pod path in softirq)', 'waits and wake-ups (futex, poll, scheduler)',
         'softirqs at interrupt exit', 'JVM, unresolved frames', 'iperf3 (the pods)', 'other processes']


def samples(path):
    """(comm, pid, frames leaf first) per sample of `perf script -F comm,pid,tid,ip,sym -g`."""
    cur = None
    with open(path, errors='replace') as f:
        for line in f:
            if not line.strip():
                if cur:
                    yield cur
                cur = None
            elif not line[0].isspace():
                head = line.split()
                pid = next((int(t.split('/')[0]) for t in head[1:] if t.split('/')[0].isdigit()), -1)
                cur = (head[0], pid, [])
            elif cur is not None:
                parts = line.strip().split(None, 1)
                cur[2].append(parts[1] if len(parts) > 1 else parts[0])
    if cur:
        yield cur


def daemon_category(frames):
    joined = ' | '.join(frames)
    for key, name in KERNEL:
        if key in joined:
            return name
    leaf = frames[0] if frames else ''
    if leaf.startswith('StubRoutines (compilerstubs)'):
        return 'AEAD intrinsics (ChaCha20, Poly1305 stubs)'
    if leaf.startswith('StubRoutines'):
        in_engine = any('crypto.IntrinsicEngine' in f for f in frames[1:3])
        return 'AEAD engine: array copies' if in_engine else 'other array copies (kernel buffers <-> heap)'
    for key, name in JAVA:
        if key in leaf:
            return name
    return 'JVM, unresolved frames'


def profile(directory):
    read = lambda name: open(os.path.join(directory, name)).read().split()
    pids = {int(p) for p in read('pids')}
    gbit_s = float(read('gbit_s')[0])
    seconds = float(read('seconds')[0])
    counts = collections.Counter()
    total = 0
    for comm, pid, frames in samples(os.path.join(directory, 'perf.txt')):
        total += 1
        if pid in pids:
            counts[daemon_category(frames)] += 1
        elif comm == 'iperf3':
            counts['iperf3 (the pods)'] += 1
        elif comm == 'swapper':
            counts['idle'] += 1
        else:
            counts['other processes'] += 1
    cpus = os.cpu_count()
    # a sample is 1/total of cpus × seconds of CPU time; per gigabit: divide by gbit_s × seconds
    scale = cpus * seconds / max(total, 1) / (gbit_s * seconds) * 1000
    return {k: v * scale for k, v in counts.items()}, gbit_s


def main(args):
    if not args or any('=' not in a for a in args):
        sys.exit(__doc__)
    runs = [(a.split('=', 1)[0], profile(a.split('=', 1)[1])) for a in args]
    width = max(len(c) for c in ORDER + ['idle'])
    print(f"{'ms of CPU per Gbit':{width}s}" + ''.join(f'{label:>14s}' for label, _ in runs))
    print(f"{'(Gbit/s of the run)':{width}s}" + ''.join(f'{g:14.3f}' for _, (_, g) in runs))
    for c in ORDER:
        print(f'{c:{width}s}' + ''.join(f'{r.get(c, 0):14.1f}' for _, (r, _) in runs))
    print(f"{'total busy':{width}s}" + ''.join(f'{sum(v for k, v in r.items() if k != "idle"):14.1f}' for _, (r, _) in runs))
    print(f"{'idle':{width}s}" + ''.join(f'{r.get("idle", 0):14.1f}' for _, (r, _) in runs))


if __name__ == '__main__':
    main(sys.argv[1:])
