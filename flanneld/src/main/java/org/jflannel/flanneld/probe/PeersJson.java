package org.jflannel.flanneld.probe;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.Comparator;
import java.util.List;
import org.jflannel.core.Lease;

/**
 * The {@code /peers} document (Ours, issue 12): every peer with its lease, the entries the kernel
 * holds for it, the last probe round and the cause when it is unreachable. Documented in
 * docs/operations.md; the field names are a public interface.
 */
public final class PeersJson {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private PeersJson() {
    }

    /** {@code prober} null: probing is off (flag or backend); the document says so and lists nothing. */
    public static String render(Prober prober, String backend) throws IOException {
        ObjectNode root = JSON.createObjectNode();
        root.put("probing", prober != null);
        root.put("backend", backend);
        ArrayNode peers = root.putArray("peers");
        if (prober == null) {
            return JSON.writeValueAsString(root);
        }
        root.put("intervalSeconds", prober.settings().interval().toSeconds());
        root.put("fullSizeBytes", prober.settings().fullSize());
        KernelEntries kernel = prober.kernelEntries();
        List<PeerStatus> all = prober.statuses().stream()
                .sorted(Comparator.comparing((PeerStatus s) -> s.target().lease().subnet())).toList();
        for (PeerStatus s : all) {
            peers.add(peer(s, kernel, prober.settings().vxlanDevice() != null));
        }
        return JSON.writeValueAsString(root);
    }

    private static ObjectNode peer(PeerStatus s, KernelEntries kernel, boolean vxlan) {
        PeerTarget t = s.target();
        ObjectNode n = JSON.createObjectNode();
        n.put("peer", t.peer());
        n.put("subnet", t.subnet());
        n.put("state", s.state().name().toLowerCase(java.util.Locale.ROOT));
        n.put("cause", s.cause() == null ? null : s.cause().label());
        n.put("detail", s.detail());
        n.put("since", s.since().toString());
        n.set("lease", lease(t));
        if (vxlan) {
            KernelEntries.PeerEntriesView e = kernel.of(t);
            ObjectNode entries = n.putObject("entries");
            entries.put("neighbour", e.neighbourMac());
            ArrayNode fdb = entries.putArray("fdb");
            e.fdb().forEach(fdb::add);
            entries.put("route", e.route());
        }
        ObjectNode last = n.putObject("lastProbe");
        if (s.lastProbe() != null) {
            last.put("at", s.lastProbe().toString());
            last.put("target", t.overlay().getHostAddress());
            last.put("small", s.small().describe());
            last.put("fullSize", s.fullSize().describe());
            last.put("underlay", s.underlay() == null ? null : s.underlay().describe());
            if (s.small().ok()) {
                last.put("rttMs", Math.round(s.small().rttSeconds() * 1e6) / 1e3);
            }
        }
        return n;
    }

    private static ObjectNode lease(PeerTarget t) {
        Lease l = t.lease();
        ObjectNode n = JSON.createObjectNode();
        n.put("subnet", t.subnet());
        n.put("publicIp", t.peer());
        n.put("backendType", l.attrs().backendType());
        n.put("vtepMac", t.vtepMac() == null ? null : t.vtepMac().toString());
        n.put("expiration", l.expiration() == null ? null : l.expiration().toString());
        return n;
    }
}
