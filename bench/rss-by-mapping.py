#!/usr/bin/env python3
"""bench/rss-by-mapping.py PID: a process's RSS by mapping (anonymous, the CDS archive, libjvm.so, the modules
file, jars, other files), from /proc/PID/smaps. For SMAPS=bench/rss-by-mapping.py bench/flanneld-rss-*.py."""
import sys, collections
pid = sys.argv[1]
agg = collections.Counter(); cur = None
for line in open("/proc/%s/smaps" % pid):
    f = line.split()
    if len(f) >= 5 and "-" in f[0] and not f[0].endswith(":"):
        name = f[5] if len(f) > 5 else "[anon]"
        if name.endswith(".jsa"): name = "jsa:" + name.rsplit("/",1)[1]
        elif name.endswith(".so"): name = "so:" + name.rsplit("/",1)[1]
        elif name.endswith("/modules"): name = "jimage modules"
        elif name.endswith(".jar"): name = "jars"
        cur = name
    elif f[0] == "Rss:":
        agg[cur] += int(f[1])
for k, v in agg.most_common(12):
    print("  %-40s %6.1f MB" % (k, v / 1024))
print("  total %.1f MB" % (sum(agg.values()) / 1024))
