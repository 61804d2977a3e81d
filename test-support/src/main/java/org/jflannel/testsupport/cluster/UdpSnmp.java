package org.jflannel.testsupport.cluster;

import java.io.IOException;
import java.time.Duration;
import java.util.List;

/**
 * A namespace's UDP counters from {@code /proc/net/snmp} (the {@code Udp:} lines): datagrams
 * delivered to sockets, and those that arrived but were dropped (no socket, full receive buffer,
 * bad checksum).
 */
public record UdpSnmp(long inDatagrams, long noPorts, long inErrors, long rcvbufErrors, long inCsumErrors) {

    /** Reads the counters of namespace {@code netns} ({@code /proc/net/snmp} shows the reader's namespace). */
    static UdpSnmp read(String netns) throws IOException, InterruptedException {
        return parse(Cmd.run(Duration.ofSeconds(10), List.of("ip", "netns", "exec", netns, "cat", "/proc/net/snmp"))
                .orThrow().stdout());
    }

    /** Parses the two {@code Udp:} lines (names, then values). */
    static UdpSnmp parse(String snmp) throws IOException {
        List<String> lines = snmp.lines().filter(l -> l.startsWith("Udp: ")).toList();
        if (lines.size() != 2) {
            throw new IOException("expected two Udp: lines in /proc/net/snmp, got " + lines);
        }
        List<String> names = List.of(lines.get(0).split("\\s+"));
        String[] values = lines.get(1).split("\\s+");
        return new UdpSnmp(value(names, values, "InDatagrams"), value(names, values, "NoPorts"),
                value(names, values, "InErrors"), value(names, values, "RcvbufErrors"), value(names, values, "InCsumErrors"));
    }

    private static long value(List<String> names, String[] values, String name) throws IOException {
        int i = names.indexOf(name);
        if (i < 0 || i >= values.length) {
            throw new IOException("no " + name + " in /proc/net/snmp's Udp: lines");
        }
        return Long.parseLong(values[i]);
    }

    /** What changed since {@code before}. */
    public UdpSnmp minus(UdpSnmp before) {
        return new UdpSnmp(inDatagrams - before.inDatagrams, noPorts - before.noPorts, inErrors - before.inErrors,
                rcvbufErrors - before.rcvbufErrors, inCsumErrors - before.inCsumErrors);
    }
}
