#!/usr/bin/env python3
"""An upstream-style udp backend node, written independently of ours (what flannel's proxy.c does):
a plain TUN (IFF_TUN | IFF_NO_PI: no virtio header, no offloads) and a UDP socket. Every packet read
from the TUN goes to the one peer as one datagram; every datagram from that peer is written to the TUN
as one packet; the TTL is decremented both ways (header checksum recomputed). Prints "ready" once the
TUN exists, and at the end one line of counters. Stops when stdin closes or after SECONDS.

usage: upstream_peer.py TUN_NAME BIND_IP PORT PEER_IP PEER_PORT SECONDS [nocheck]

nocheck: send with the UDP checksum off (SO_NO_CHECK), as the kernel datapath's encapsulating program
does; our node takes that as proof that this peer's kernel decapsulates and sends it TCP from its kernel.
"""
import fcntl
import os
import select
import socket
import struct
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000


def checksum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def decrement_ttl(p):
    if len(p) < 20 or p[0] >> 4 != 4 or p[8] <= 1:
        return False
    ihl = (p[0] & 0x0F) * 4
    p[8] -= 1
    p[10:12] = b"\0\0"
    p[10:12] = struct.pack("!H", checksum(bytes(p[:ihl])))
    return True


def main():
    name, bind_ip, port, peer_ip, peer_port, seconds = sys.argv[1:7]
    port, peer_port, seconds = int(port), int(peer_port), float(seconds)
    tun = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(tun, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if sys.argv[7:8] == ["nocheck"]:
        s.setsockopt(socket.SOL_SOCKET, 11, 1)  # SO_NO_CHECK
    s.bind((bind_ip, port))
    print("ready", flush=True)
    sent = received = biggest = foreign = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        r, _, _ = select.select([tun, s, sys.stdin], [], [], 0.5)
        if sys.stdin in r and not os.read(sys.stdin.fileno(), 1):
            break
        if tun in r:
            p = bytearray(os.read(tun, 65535))
            if decrement_ttl(p):
                s.sendto(p, (peer_ip, peer_port))
                sent += 1
        if s in r:
            p, addr = s.recvfrom(65535)
            if addr[0] != peer_ip:
                foreign += 1
                continue
            biggest = max(biggest, len(p))
            p = bytearray(p)
            # one datagram, one whole IP packet: its total length is the datagram's length
            if struct.unpack("!H", p[2:4])[0] == len(p) and decrement_ttl(p):
                os.write(tun, p)
                received += 1
    print("counters sent=%d received=%d biggest=%d foreign=%d" % (sent, received, biggest, foreign), flush=True)


if __name__ == "__main__":
    main()
