package org.jflannel.backend.ipsec.vici;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A client of charon's VICI socket (a Unix socket, {@code /var/run/charon.vici} by default): one
 * command at a time, each answered within a deadline. Streamed commands ({@code list-conns},
 * {@code list-sas}) register for their event first and collect the events until the command's
 * response. Not thread-safe; one owner.
 */
public final class ViciClient implements AutoCloseable {
    private final SocketChannel channel;
    private final Selector selector;
    private final Path path;
    private final Duration timeout;

    private ViciClient(SocketChannel channel, Selector selector, Path path, Duration timeout) {
        this.channel = channel;
        this.selector = selector;
        this.path = path;
        this.timeout = timeout;
    }

    /** Connects to the socket at {@code path}; every later exchange must complete within {@code timeout}. */
    public static ViciClient connect(Path path, Duration timeout) throws IOException {
        SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            ch.connect(UnixDomainSocketAddress.of(path));
            ch.configureBlocking(false);
            Selector sel = Selector.open();
            ch.register(sel, SelectionKey.OP_READ);
            return new ViciClient(ch, sel, path, timeout);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /** {@code version}: daemon, version, sysname, release, machine. */
    public ViciMessage version() throws IOException {
        return request("version", ViciMessage.EMPTY);
    }

    /** {@code load-shared}: an IKE pre-shared key for the given owner identities (upstream: the peer's public IP). */
    public void loadSharedIke(String psk, List<String> owners) throws IOException {
        ViciMessage m = ViciMessage.builder().put("type", "IKE").put("data", psk).put("owners", owners).build();
        checkSuccess("load-shared", "owners " + owners, request("load-shared", m));
    }

    /** {@code load-conn} of one connection (its name and its settings). */
    public void loadConn(String name, ViciMessage conn) throws IOException {
        checkSuccess("load-conn", name, request("load-conn", ViciMessage.builder().put(name, conn).build()));
    }

    /** {@code unload-conn}. */
    public void unloadConn(String name) throws IOException {
        checkSuccess("unload-conn", name, request("unload-conn", ViciMessage.builder().put("name", name).build()));
    }

    /** {@code list-conns}: the loaded connections by name, in charon's order. */
    public List<String> listConns() throws IOException {
        List<String> names = new ArrayList<>();
        for (ViciMessage e : streamed("list-conns", "list-conn", ViciMessage.EMPTY)) {
            names.addAll(e.keys());
        }
        return names;
    }

    /** {@code list-sas}: each event is {@code {ike-sa-name: {...}}}. */
    public List<ViciMessage> listSas() throws IOException {
        return streamed("list-sas", "list-sa", ViciMessage.EMPTY);
    }

    /**
     * {@code terminate} of the IKE SAs of connection {@code ike}, forced (no DELETE exchange waited for:
     * the peer may be gone). Returns false when charon had no matching SA.
     */
    public boolean terminateIke(String ike) throws IOException {
        ViciMessage r = request("terminate", ViciMessage.builder().put("ike", ike).put("force", "yes")
                .put("timeout", "-1").build());
        if ("yes".equals(r.value("success"))) {
            return true;
        }
        if (r.value("errmsg") != null && r.value("errmsg").contains("no matching")) {
            return false;
        }
        throw new ViciException("vici terminate " + ike + ": " + r.value("errmsg"));
    }

    /** One command: its CMD_RESPONSE, or a {@link ViciException} when charon does not know it. */
    public ViciMessage request(String command, ViciMessage message) throws IOException {
        write(ViciCodec.encode(ViciCodec.CMD_REQUEST, command, message));
        ViciCodec.Packet p = read(command);
        return switch (p.type()) {
            case ViciCodec.CMD_RESPONSE -> p.message();
            case ViciCodec.CMD_UNKNOWN -> throw new ViciException("vici " + command + ": unknown command");
            default -> throw new ViciException("vici " + command + ": unexpected packet type " + p.type());
        };
    }

    private List<ViciMessage> streamed(String command, String event, ViciMessage message) throws IOException {
        register(ViciCodec.EVENT_REGISTER, event);
        try {
            write(ViciCodec.encode(ViciCodec.CMD_REQUEST, command, message));
            List<ViciMessage> events = new ArrayList<>();
            while (true) {
                ViciCodec.Packet p = read(command);
                if (p.type() == ViciCodec.EVENT && event.equals(p.name())) {
                    events.add(p.message());
                } else if (p.type() == ViciCodec.CMD_RESPONSE) {
                    return events;
                } else if (p.type() == ViciCodec.CMD_UNKNOWN) {
                    throw new ViciException("vici " + command + ": unknown command");
                } else if (p.type() != ViciCodec.EVENT) {
                    throw new ViciException("vici " + command + ": unexpected packet type " + p.type());
                }
            }
        } finally {
            register(ViciCodec.EVENT_UNREGISTER, event);
        }
    }

    private void register(int type, String event) throws IOException {
        write(ViciCodec.encode(type, event, null));
        ViciCodec.Packet p;
        do {
            p = read(event);
        } while (p.type() == ViciCodec.EVENT); // events of the stream still in flight
        if (p.type() != ViciCodec.EVENT_CONFIRM) {
            throw new ViciException("vici event " + event + ": not confirmed (packet type " + p.type() + ")");
        }
    }

    private static void checkSuccess(String command, String object, ViciMessage r) throws ViciException {
        if (!"yes".equals(r.value("success"))) {
            throw new ViciException("vici " + command + " " + object + ": " + r.value("errmsg"));
        }
    }

    private void write(byte[] packet) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(packet);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (b.hasRemaining()) {
            if (channel.write(b) == 0) {
                await(deadline, SelectionKey.OP_WRITE, "write");
            }
        }
    }

    private ViciCodec.Packet read(String what) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        ByteBuffer len = ByteBuffer.allocate(4);
        fill(len, deadline, what);
        int n = len.getInt(0);
        if (n < 1 || n > ViciCodec.MAX_PACKET) {
            throw new ViciException("vici " + what + ": packet length " + n + " outside 1.." + ViciCodec.MAX_PACKET);
        }
        // grown as the bytes arrive (at most twice what came), not sized by the length field alone
        ByteBuffer body = ByteBuffer.allocate(Math.min(n, FIRST_READ));
        while (true) {
            fill(body, deadline, what);
            if (body.capacity() == n) {
                return ViciCodec.decode(body.array());
            }
            ByteBuffer bigger = ByteBuffer.allocate((int) Math.min(n, 2L * body.capacity()));
            body.flip();
            bigger.put(body);
            body = bigger;
        }
    }

    /** The first buffer for a packet's body: most of charon's answers fit. */
    private static final int FIRST_READ = 4096;

    private void fill(ByteBuffer b, long deadline, String what) throws IOException {
        while (b.hasRemaining()) {
            int n = channel.read(b);
            if (n < 0) {
                throw new ViciException("vici " + what + ": " + path + " closed by charon");
            }
            if (n == 0) {
                await(deadline, SelectionKey.OP_READ, what);
            }
        }
    }

    private void await(long deadline, int op, String what) throws IOException {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            throw new ViciException("vici " + what + ": no answer from " + path + " within " + timeout);
        }
        channel.keyFor(selector).interestOps(op);
        selector.select(Math.max(1, left / 1_000_000));
        selector.selectedKeys().clear();
    }

    @Override
    public void close() throws IOException {
        try {
            selector.close();
        } finally {
            channel.close();
        }
    }
}
