#!/usr/bin/env python3
"""Rewrites a jar in place keeping only the classes a regular expression names (and its manifest), and each
META-INF/services file cut to the classes kept; the entries keep their order and time stamps (reproducible).

    trim-jar.py JAR REGEX        e.g. trim-jar.py kubernetes-model-networking-7.8.0.jar 'networking/v1/(NetworkPolicy|IPBlock)'

Why: the daemon reads one kind of the networking model (NetworkPolicy, for --network-policy), and the jar's
other kinds (Ingress, IPAddress, ServiceCIDR, v1beta1) and its Jandex index are 85 % of its weight; the image has
a size budget (packaging/image-budget.properties). fabric8 finds the kinds through ServiceLoader, so the services
file must name only classes that are there."""
import re, sys, zipfile, os, tempfile

jar, pattern = sys.argv[1], re.compile(sys.argv[2])
before = os.path.getsize(jar)
with zipfile.ZipFile(jar) as z:
    infos = z.infolist()
    kept = {i.filename for i in infos if i.filename.endswith('.class') and pattern.search(i.filename)}
    if not kept:
        sys.exit("trim-jar: %s: no class matches %s" % (jar, pattern.pattern))
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(jar)))
    os.close(fd)
    with zipfile.ZipFile(tmp, 'w', zipfile.ZIP_DEFLATED) as out:
        for i in infos:
            name = i.filename
            if name in kept or name == 'META-INF/MANIFEST.MF' or (name.endswith('/') and any(k.startswith(name) for k in kept)):
                out.writestr(i, z.read(name))
            elif name.startswith('META-INF/services/') and not name.endswith('/'):
                lines = [l for l in z.read(name).decode().splitlines()
                         if l.strip() and l.strip().replace('.', '/') + '.class' in kept]
                if lines:
                    out.writestr(i, ('\n'.join(lines) + '\n').encode())
os.replace(tmp, jar)
print("trim-jar: %s: %d of %d classes kept, %d -> %d bytes" % (os.path.basename(jar), len(kept),
      sum(1 for i in infos if i.filename.endswith('.class')), before, os.path.getsize(jar)))
