#!/usr/bin/env python3
"""Interleaved A/B of installed CNI plugin files (issue 19, session 8): ADD+DEL (or VERSION) through the real
bridge + host-local, in a throwaway node namespace, medians of wall time and CPU (user+sys of the plugin and
every child it waited for). Unlike bench/cni-latency.sh it compares several installed plugins in one run and
changes nothing on the host: it re-executes itself in a private mount namespace where /opt is a tmpfs and
/opt/cni/bin is DIR (a directory install-cni-plugin wrote, e.g. several images' `flannel` files renamed).

  bench/cni-ab.py DIR N ADDDEL|VERSION LABEL=PLUGIN[|JFLANNEL_JAVA_OPTS] ...
      PLUGIN: a command (split at spaces; /opt/cni/bin/... as seen inside), or `bridge` for Debian's bridge alone
      given exactly the bytes flannel hands it, or `bridge@MS` for the same started MS ms late (a control: a plugin's
      start delay without its work). Run it under `chrt -f 10` on a busy machine.
  CNI_AB_PAUSE_MS=200: sleep that long between each ADD and its DEL (default 0, as in sessions 8 and 9). bridge's
      DEL of an interface created < 1 ms before is 5-10 ms faster than of one a few ms old, so back to back, `bridge`
      alone (its DEL follows its ADD at once) gets a faster DEL than any plugin that starts slower (session 10:
      `bridge@25` shows the same DEL excess with no plugin work). On a node, DEL comes at the pod's end.
e.g. bench/cni-ab.py /tmp/cnibin 40 ADDDEL a=bridge before=/opt/cni/bin/flannel-before after=/opt/cni/bin/flannel \\
         upstream=$JFLANNEL_UPSTREAM_DIR/flannel
Needs root, iproute2, util-linux (unshare) and /usr/lib/cni."""
import ctypes, json, os, random, statistics, subprocess, sys, tempfile, time

if os.environ.get('CNI_AB_INSIDE') != '1':
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    d = os.path.abspath(sys.argv[1])
    os.environ['CNI_AB_INSIDE'] = '1'
    os.execvp('unshare', ['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c',
                          'mount -t tmpfs tmpfs /opt && mkdir -p /opt/cni/bin && mount --bind "$0" /opt/cni/bin && exec "$@"',
                          d, sys.executable, os.path.abspath(__file__)] + sys.argv[1:])

N = int(sys.argv[2]); MODE = sys.argv[3]
PAUSE = float(os.environ.get('CNI_AB_PAUSE_MS', '0')) / 1000
variants = []
for spec in sys.argv[4:]:
    label, rest = spec.split('=', 1)
    plugin, _, opts = rest.partition('|')
    variants.append((label, plugin, opts))
suffix = '%06x' % random.randrange(1 << 24)
NODE, POD, BR = 'an' + suffix, 'ap' + suffix, 'ab' + suffix
work = tempfile.mkdtemp(prefix='cni-ab-')
libc = ctypes.CDLL(None, use_errno=True)
def sh(*a): subprocess.run(a, check=True)
sh('ip', 'netns', 'add', NODE); sh('ip', 'netns', 'add', POD)
try:
    sh('ip', '-n', NODE, 'link', 'set', 'lo', 'up')
    fd = os.open('/run/netns/' + NODE, os.O_RDONLY)
    if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET: every plugin runs in the node namespace
        raise OSError(ctypes.get_errno(), 'setns')
    with open(work + '/subnet.env', 'w') as f:
        f.write('FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n')
    conf = json.dumps({"cniVersion": "0.3.1", "name": "cbr0", "type": "flannel", "delegate": {"bridge": BR, "hairpinMode": True, "isDefaultGateway": True},
                       "ipam": {"dataDir": work + "/ipam"}, "subnetFile": work + "/subnet.env", "dataDir": work + "/flannel"}, separators=(',', ':'))
    bconf = json.dumps({"bridge": BR, "cniVersion": "0.3.1", "hairpinMode": True, "ipMasq": False, "ipam": {"dataDir": work + "/ipam",
                        "ranges": [[{"subnet": "10.244.1.0/24"}]], "routes": [{"dst": "10.244.0.0/16"}], "type": "host-local"},
                        "isDefaultGateway": True, "isGateway": True, "mtu": 1450, "name": "cbr0", "type": "bridge"}, separators=(',', ':'))
    base = {k: v for k, v in os.environ.items() if not k.startswith('CNI_') and k != 'JFLANNEL_JAVA_OPTS'}
    base.update(CNI_CONTAINERID='ab' + suffix, CNI_NETNS='/run/netns/' + POD, CNI_IFNAME='eth0', CNI_PATH='/usr/lib/cni')

    def run(v, cmd):
        label, plugin, opts = v
        env = dict(base, CNI_COMMAND=cmd)
        if opts:
            env['JFLANNEL_JAVA_OPTS'] = opts
        alone = plugin == 'bridge' or plugin.startswith('bridge@')
        delay = float(plugin[7:]) / 1000 if plugin.startswith('bridge@') else 0
        argv = ['/usr/lib/cni/bridge'] if alone else plugin.split()
        data = (bconf if alone else conf).encode()
        r, w = os.pipe(); ro, wo = os.pipe()
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            os.dup2(r, 0); os.dup2(wo, 1)
            os.dup2(os.open('/dev/null', os.O_WRONLY), 2)
            if delay:
                time.sleep(delay)
            os.execve(argv[0], argv, env)
        os.close(r); os.close(wo)
        os.write(w, data); os.close(w)
        out = b''
        while True:
            b = os.read(ro, 65536)
            if not b:
                break
            out += b
        os.close(ro)
        _, status, ru = os.wait4(pid, 0)
        wall = (time.perf_counter() - t0) * 1000
        if status != 0:
            raise SystemExit(f'cni-ab: {label} {cmd} failed: {out!r}')
        return wall, (ru.ru_utime + ru.ru_stime) * 1000

    cmds = ['VERSION'] if MODE == 'VERSION' else ['ADD', 'DEL']
    res = {(v[0], c): ([], []) for v in variants for c in cmds}
    for v in variants:  # warm-up: the bridge exists, files are in the page cache
        for c in cmds:
            run(v, c)
    load0 = open('/proc/loadavg').read().split()[:3]
    for i in range(N):
        for v in (variants if i % 2 == 0 else variants[::-1]):
            for c in cmds:
                if c == 'DEL' and PAUSE:
                    time.sleep(PAUSE)  # the pod's interface settles before its DEL, as on a node (see the header)
                w, cpu = run(v, c)
                res[(v[0], c)][0].append(w); res[(v[0], c)][1].append(cpu)
    load1 = open('/proc/loadavg').read().split()[:3]
    print(f'cni-ab: N={N} {MODE}, pause before DEL {PAUSE * 1000:.0f} ms, {os.cpu_count()} cores, load {" ".join(load0)} -> {" ".join(load1)}, {time.strftime("%H:%M:%S")}; median (min) ms')
    for v in variants:
        line = f'  {v[0]:<24}'
        for c in cmds:
            w, cpu = res[(v[0], c)]
            line += f' {c} wall {statistics.median(w):6.1f} ({min(w):5.1f}) cpu {statistics.median(cpu):6.1f} ({min(cpu):5.1f})'
        print(line, flush=True)
finally:
    subprocess.run(['ip', 'netns', 'del', POD]); subprocess.run(['ip', 'netns', 'del', NODE])
    subprocess.run(['rm', '-rf', work])
