#!/usr/bin/env python3
"""A host on the underlay forging a udp peer's datagrams (raw socket, IP_HDRINCL: the outer source is the peer's
public IP) to a node's udp port: what could flip the kernel datapath's proof of that peer. Sends COUNT datagrams at
RATE a second at most (both bounded here), cycling through:

  reply0  an echo reply of the probe's identifier 0x6a66 with a random 8-byte payload (a guessed nonce), UDP checksum 0
  tcp0    a TCP segment, UDP checksum 0 (what an encapsulating kernel sends)
  tcpsum  a TCP segment, UDP checksum computed (what a daemon sends: "this peer's kernel does not encapsulate")
  replysum an echo reply as reply0, UDP checksum computed

KINDS picks some of them (comma-separated). The inner packets go from INNER_SRC to INNER_DST (in the peer's and the
node's leases). Prints "sent N kind=count ..." and exits.

usage: spoof_peer.py SRC_IP DST_IP PORT INNER_SRC INNER_DST COUNT RATE KINDS
"""
import os
import socket
import struct
import sys
import time


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def ipv4(src, dst, proto, payload, ttl=64):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 0, 0x4000, ttl, proto, 0,
                    socket.inet_aton(src), socket.inet_aton(dst))
    return h[:10] + struct.pack("!H", csum(h)) + h[12:] + payload


def echo_reply(ident, seq, payload):
    body = struct.pack("!BBHHH", 0, 0, 0, ident, seq) + payload
    return body[:2] + struct.pack("!H", csum(body)) + body[4:]


def tcp(src, dst, sport, dport, seq):
    h = struct.pack("!HHIIBBHHH", sport, dport, seq, 0, 5 << 4, 0x10, 65535, 0, 0)
    pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, 6, len(h))
    return h[:16] + struct.pack("!H", csum(pseudo + h)) + h[18:]


def udp(src, dst, port, payload, checksummed):
    length = 8 + len(payload)
    h = struct.pack("!HHHH", port, port, length, 0)
    if checksummed:
        pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, 17, length)
        c = csum(pseudo + h + payload) or 0xffff
        h = h[:6] + struct.pack("!H", c)
    return h + payload


def main():
    src, dst, port, isrc, idst, count, rate, kinds = sys.argv[1:9]
    port, count, rate = int(port), min(int(count), 100000), min(max(int(rate), 1), 5000)
    kinds = kinds.split(",")
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    sent = {k: 0 for k in kinds}
    gap = 1.0 / rate
    start = time.monotonic()
    for i in range(count):
        k = kinds[i % len(kinds)]
        if k in ("reply0", "replysum"):
            inner = ipv4(isrc, idst, 1, echo_reply(0x6a66, i & 0xffff, os.urandom(8)))
        else:
            inner = ipv4(isrc, idst, 6, tcp(isrc, idst, 40000 + (i % 1000), 9, i))
        out = ipv4(src, dst, 17, udp(src, dst, port, inner, k in ("tcpsum", "replysum")))
        s.sendto(out, (dst, 0))
        sent[k] += 1
        delay = start + (i + 1) * gap - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    print("sent %d %s" % (count, " ".join("%s=%d" % (k, v) for k, v in sent.items())), flush=True)


if __name__ == "__main__":
    main()
