package org.jflannel.cni;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The plugin's stdin configuration (REFERENCE §11.1), decoded as upstream's Go struct
 * {@code NetConf} is: defaults first, then the JSON; null keeps a default; an explicit "" stays.
 * The maps are the JSON objects as given (Go's {@code map[string]interface{}}).
 *
 * @param delegate          the user's {@code delegate}, or null
 * @param ipam              the top-level {@code ipam}, or null
 * @param runtimeConfig     {@code runtimeConfig}, or null
 * @param prevResult        {@code prevResult}, or null
 * @param validAttachments  container IDs in {@code cni.dev/valid-attachments}, or null when absent
 */
record FlannelNetConf(String cniVersion, String name, String subnetFile, String dataDir,
                      Map<String, Object> delegate, Map<String, Object> ipam, Map<String, Object> runtimeConfig,
                      Map<String, Object> prevResult, List<String> validAttachments) {

    static final String DEFAULT_SUBNET_FILE = "/run/flannel/subnet.env";
    static final String DEFAULT_DATA_DIR = "/var/lib/cni/flannel";
    static final String VALID_ATTACHMENTS = "cni.dev/valid-attachments";

    FlannelNetConf {
        validAttachments = validAttachments == null ? null : List.copyOf(validAttachments);
    }

    /**
     * Decodes stdin; the message of the exception is Go's decode error
     * (e.g. {@code json: cannot unmarshal string into Go struct field NetConf.delegate of type map[string]interface {}}).
     */
    @SuppressWarnings("unchecked")
    static FlannelNetConf decode(byte[] stdin) throws CniException {
        Object tree;
        try {
            tree = GoJson.parse(stdin);
        } catch (GoJson.SyntaxException e) {
            throw CniException.internal(e.getMessage());
        }
        if (tree == null) {
            tree = Map.of();
        }
        if (!(tree instanceof Map)) {
            throw CniException.internal("json: cannot unmarshal " + GoDecode.kind(tree) + " into Go value of type main.NetConf");
        }
        Map<String, Object> obj = (Map<String, Object>) tree;
        GoDecode d = new GoDecode("NetConf");
        String cniVersion = d.string(obj, "cniVersion", "");
        String name = d.string(obj, "name", "");
        d.string(obj, "type", "");
        String subnetFile = d.string(obj, "subnetFile", DEFAULT_SUBNET_FILE);
        String dataDir = d.string(obj, "dataDir", DEFAULT_DATA_DIR);
        checkCapabilities(d, obj);
        checkDns(d, obj);
        Map<String, Object> ipam = d.map(obj, "ipam");
        Map<String, Object> delegate = d.map(obj, "delegate");
        Map<String, Object> runtimeConfig = d.map(obj, "runtimeConfig");
        Map<String, Object> prevResult = d.map(obj, "prevResult");
        List<String> valid = validAttachments(d, obj);
        if (d.error() != null) {
            throw CniException.internal(d.error());
        }
        return new FlannelNetConf(cniVersion, name, subnetFile, dataDir, delegate, ipam, runtimeConfig, prevResult, valid);
    }

    private static void checkCapabilities(GoDecode d, Map<String, Object> obj) {
        Object caps = GoDecode.field(obj, "capabilities");
        if (caps == null) {
            return;
        }
        if (!(caps instanceof Map<?, ?> m)) {
            d.mismatch(caps, "capabilities", "map[string]bool");
            return;
        }
        for (Object v : m.values()) {
            if (v != null && !(v instanceof Boolean)) {
                d.mismatch(v, "capabilities", "bool");
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static void checkDns(GoDecode d, Map<String, Object> obj) {
        Object dns = GoDecode.field(obj, "dns");
        if (dns == null) {
            return;
        }
        if (!(dns instanceof Map)) {
            d.mismatch(dns, "dns", "types.DNS");
            return;
        }
        Map<String, Object> m = (Map<String, Object>) dns;
        d.stringList(m, "nameservers", "DNS", "dns.nameservers");
        Object domain = GoDecode.field(m, "domain");
        if (domain != null && !(domain instanceof String)) {
            d.mismatch(domain, "DNS", "dns.domain", "string");
        }
        d.stringList(m, "search", "DNS", "dns.search");
        d.stringList(m, "options", "DNS", "dns.options");
    }

    private static List<String> validAttachments(GoDecode d, Map<String, Object> obj) {
        if (!GoDecode.present(obj, VALID_ATTACHMENTS)) {
            return null;
        }
        Object v = GoDecode.field(obj, VALID_ATTACHMENTS);
        List<String> ids = new ArrayList<>();
        if (v == null) {
            return ids;
        }
        if (!(v instanceof List<?> list)) {
            d.mismatch(v, VALID_ATTACHMENTS, "[]types.GCAttachment");
            return ids;
        }
        for (Object e : list) {
            if (e == null) {
                continue;
            }
            if (!(e instanceof Map<?, ?>)) {
                d.mismatch(e, VALID_ATTACHMENTS, "types.GCAttachment");
                continue;
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> att = (Map<String, Object>) e;
            Object id = GoDecode.field(att, "containerID");
            Object ifname = GoDecode.field(att, "ifname");
            if (id != null && !(id instanceof String)) {
                d.mismatch(id, "GCAttachment", VALID_ATTACHMENTS + ".containerID", "string");
            } else if (id != null) {
                ids.add((String) id);
            }
            if (ifname != null && !(ifname instanceof String)) {
                d.mismatch(ifname, "GCAttachment", VALID_ATTACHMENTS + ".ifname", "string");
            }
        }
        return ids;
    }
}
