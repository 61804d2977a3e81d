package org.jflannel.linuxnet.netlink;

import static org.jflannel.linuxnet.netlink.Rtnl.*;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jflannel.core.MacAddress;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The rtnetlink codec without a socket. The codec classes are package-private, so this benchmark
 * sits in their package (a split package on the class path, no production change).
 *
 * <p>{@link #encodePeerTriple}: the three requests flannel sends per VXLAN peer (REFERENCE §6.7),
 * written as {@code NlChannel} writes them, into a reused direct buffer. {@link #parseRouteDump}:
 * a main-table route dump of a 2,000-peer node, laid out byte for byte as the kernel sends it
 * (RTA_TABLE, RTA_DST, RTA_GATEWAY, RTA_OIF; see linux-net's captured route-dump.hex), walked and
 * decoded as {@code NlChannel.dump} with {@code RtNetlink.routes}' decoder does.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class RtnlCodecBench {
    private static final int PEERS = 2000;
    private static final int VXLAN_LINK = 4;
    private static final int CREATE_REPLACE = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE;

    private NlWriter writer;
    private Neighbour neighbour;
    private FdbEntry fdb;
    private Route route;
    private ByteBuffer dump;
    private int dumpLength;
    private int seq;

    @Setup
    public void setUp() throws Exception {
        writer = new NlWriter(ByteBuffer.allocateDirect(NlChannel.TX_SIZE));
        InetAddress gateway = InetAddress.getByName("10.244.3.0");
        MacAddress mac = MacAddress.parse("0e:5c:1f:a4:7b:30");
        neighbour = Neighbour.permanent(VXLAN_LINK, gateway, mac);
        fdb = new FdbEntry(VXLAN_LINK, mac, InetAddress.getByName("192.0.2.12"));
        route = Route.onlink(new IpPrefix(gateway, 24), gateway, VXLAN_LINK);
        buildDump();
        if (parse().size() != PEERS + 2) {
            throw new IllegalStateException("route dump fixture decodes to " + parse().size() + " main-table routes");
        }
    }

    @Benchmark
    public void encodePeerTriple(Blackhole bh) {
        NeighCodec.neighbour(writer.begin(RTM_NEWNEIGH, CREATE_REPLACE, ++seq), neighbour);
        bh.consume(writer.finish().remaining());
        NeighCodec.fdb(writer.begin(RTM_NEWNEIGH, CREATE_REPLACE, ++seq), fdb);
        bh.consume(writer.finish().remaining());
        RouteCodec.route(writer.begin(RTM_NEWROUTE, CREATE_REPLACE, ++seq), route, false);
        bh.consume(writer.finish().remaining());
    }

    /** 2,000 onlink routes, the blackhole for the network, the kernel's link route: 2,002 routes, all in the main table. */
    @Benchmark
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public List<Route> parseRouteDump() {
        return parse();
    }

    /** The loop of NlChannel.dumpOnce over one received buffer, with RtNetlink.routes' decoder. */
    private List<Route> parse() {
        List<Route> out = new ArrayList<>();
        for (int at = 0; at + NlWriter.HDRLEN <= dumpLength; ) {
            int len = dump.getInt(at);
            int type = dump.getShort(at + 4) & 0xffff;
            if (len < NlWriter.HDRLEN || at + len > dumpLength) {
                break;
            }
            if (dump.getInt(at + 8) == 7 && type == RTM_NEWROUTE && !RouteCodec.isCloned(dump, at + NlWriter.HDRLEN)) {
                Route r = RouteCodec.decode(dump, at + NlWriter.HDRLEN, len - NlWriter.HDRLEN);
                if (r.table() == Route.TABLE_MAIN) {
                    out.add(r);
                }
            }
            at += (len + 3) & ~3;
        }
        return out;
    }

    private void buildDump() {
        dump = ByteBuffer.allocateDirect(NlChannel.RX_SIZE).order(ByteOrder.nativeOrder());
        // 10.128.0.0/9 blackhole, proto boot (flanneld's route for the whole network, as for the leases in org.jflannel.bench.Leases)
        message(0x0a800000, 9, 0, 0, 0, 3, 0, 6, 0);
        for (int i = 0; i < PEERS; i++) {
            int subnet = (10 << 24) | ((128 + i / 256) << 16) | ((i % 256) << 8);
            message(subnet, 24, subnet, 0, VXLAN_LINK, 3, 0, 1, RTNH_F_ONLINK);
        }
        // 192.0.2.0/24 dev ext0 proto kernel scope link src 192.0.2.1
        message(0xc0000200, 24, 0, 0xc0000201, 3, 2, 253, 1, 0);
        // the terminating NLMSG_DONE
        dump.putInt(20).putShort((short) NLMSG_DONE).putShort((short) NLM_F_MULTI).putInt(7).putInt(0).putInt(0);
        dumpLength = dump.position();
    }

    private void message(int dst, int dstLen, int gateway, int prefsrc, int oif, int protocol, int scope, int type, int flags) {
        int start = dump.position();
        dump.putInt(0).putShort((short) RTM_NEWROUTE).putShort((short) NLM_F_MULTI).putInt(7).putInt(0x47d66b02);
        dump.put((byte) AF_INET).put((byte) dstLen).put((byte) 0).put((byte) 0)
                .put((byte) Route.TABLE_MAIN).put((byte) protocol).put((byte) scope).put((byte) type).putInt(flags);
        attr(RTA_TABLE, Route.TABLE_MAIN);
        address(RTA_DST, dst);
        if (gateway != 0) {
            address(RTA_GATEWAY, gateway);
        }
        if (prefsrc != 0) {
            address(7 /* RTA_PREFSRC */, prefsrc);
        }
        if (oif != 0) {
            attr(RTA_OIF, oif);
        }
        dump.putInt(start, dump.position() - start);
    }

    /** A 4-byte attribute in host order (table, interface index). */
    private void attr(int type, int value) {
        dump.putShort((short) 8).putShort((short) type).putInt(value);
    }

    /** An IPv4 address attribute: network byte order, whatever the host's. */
    private void address(int type, int address) {
        dump.putShort((short) 8).putShort((short) type)
                .put((byte) (address >>> 24)).put((byte) (address >>> 16)).put((byte) (address >>> 8)).put((byte) address);
    }
}
