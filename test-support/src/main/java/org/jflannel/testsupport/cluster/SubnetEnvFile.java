package org.jflannel.testsupport.cluster;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A node's {@code subnet.env} as its daemon wrote it (ours or upstream's, from the build or from the
 * image): the variables, the node's lease from them, and a stamp that tells a file written anew
 * (both daemons write it by rename) from the one an earlier daemon left.
 */
record SubnetEnvFile(Path file) {
    /** Which file this is now: a rename gives a new inode, a rewrite a new time; null when there is none. */
    record Stamp(Object fileKey, FileTime modified) {
    }

    SubnetEnvFile {
        Objects.requireNonNull(file, "file");
    }

    /** {@code FLANNEL_NETWORK}, {@code FLANNEL_SUBNET}, ... in the file's order. */
    Map<String, String> read() throws IOException {
        Map<String, String> out = new LinkedHashMap<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                out.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        return out;
    }

    /** Node {@code node}'s lease: {@code FLANNEL_SUBNET} and {@code FLANNEL_MTU}, with its underlay address as public IP. */
    NodeLease lease(String node, InetAddress publicIp) throws IOException {
        return lease(node, "FLANNEL_SUBNET", publicIp);
    }

    /** Node {@code node}'s IPv6 lease: {@code FLANNEL_IPV6_SUBNET} and {@code FLANNEL_MTU}, with its IPv6 underlay address. */
    NodeLease ipv6Lease(String node, InetAddress publicIpv6) throws IOException {
        return lease(node, "FLANNEL_IPV6_SUBNET", publicIpv6);
    }

    private NodeLease lease(String node, String subnetVar, InetAddress publicIp) throws IOException {
        Map<String, String> vars = read();
        String subnet = vars.get(subnetVar);
        if (subnet == null) {
            throw new IOException(file + " has no " + subnetVar + ": " + vars);
        }
        return new NodeLease(node, subnet, publicIp, Integer.parseInt(vars.getOrDefault("FLANNEL_MTU", "0")));
    }

    /** The file's stamp now; null when it does not exist. */
    Stamp stamp() throws IOException {
        if (!Files.isRegularFile(file)) {
            return null;
        }
        BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
        return new Stamp(a.fileKey(), a.lastModifiedTime());
    }

    /** Whether the file exists and is not the one {@code before} stamped (null: there was none). */
    boolean writtenSince(Stamp before) throws IOException {
        Stamp now = stamp();
        return now != null && !now.equals(before);
    }
}
