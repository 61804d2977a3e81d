package org.jflannel.cni;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * The fast path's warm-up: pod ADDs and DELs played through the daemon's whole request path
 * ({@link CniServer}'s request handling, {@link RemoteHost}, {@link Wire}, the plugin's commands)
 * against a launcher played here in memory, so the first pods of a node find that code compiled.
 * flanneld runs C1 only, which compiles a method after about 200 calls: a node starts far fewer pods
 * than that, so without this the code that serves them stays interpreted (measured: the daemon's CPU
 * per ADD+DEL 3.7 ms after 20 pods, 1.4 ms after 1,000). Nothing touches the host: the played launcher
 * answers every step (the scratch file kept in memory, the delegate's result a bridge's); the node's
 * own subnet.env is read, as a request reads it. Not counted as requests.
 */
final class Rehearsal {

    /** A bridge plugin's ADD result for CNI 0.3.1, as the played delegate prints it. */
    private static final byte[] BRIDGE_RESULT = ("{\"cniVersion\":\"0.3.1\",\"interfaces\":[{\"name\":\"cni0\",\"mac\":\"0a:58:0a:f4:01:01\"},"
        + "{\"name\":\"veth2c1a9f3e\",\"mac\":\"5e:1c:6a:02:9b:d4\"},{\"name\":\"eth0\",\"mac\":\"0a:58:0a:f4:01:02\","
        + "\"sandbox\":\"/var/run/netns/rehearsal\"}],\"ips\":[{\"version\":\"4\",\"interface\":2,\"address\":\"10.244.1.2/24\","
        + "\"gateway\":\"10.244.1.1\"}],\"routes\":[{\"dst\":\"10.244.0.0/16\"},{\"dst\":\"0.0.0.0/0\",\"gw\":\"10.244.1.1\"}],"
        + "\"dns\":{}}").getBytes(StandardCharsets.UTF_8);

    private final CniServer server;
    private final Path subnetFile;
    /** The scratch file the played launcher keeps between an ADD and its DEL. */
    private byte[] scratch = new byte[0];

    Rehearsal(CniServer server, Path subnetFile) {
        this.server = server;
        this.subnetFile = subnetFile;
    }

    /** Plays {@code pods} ADDs, each followed by its DEL; returns how many of the 2 × pods were answered with success. */
    int play(int pods) {
        int ok = 0;
        for (int i = 0; i < pods; i++) {
            ok += once("ADD", i) ? 1 : 0;
            ok += once("DEL", i) ? 1 : 0;
        }
        return ok;
    }

    private boolean once(String command, int pod) {
        String dataDir = "/rehearsal/data";
        String config = "{\"cniVersion\":\"0.3.1\",\"name\":\"cbr0\",\"type\":\"flannel\",\"delegate\":{\"hairpinMode\":true,"
            + "\"isDefaultGateway\":true},\"subnetFile\":\"" + subnetFile.toAbsolutePath() + "\",\"dataDir\":\"" + dataDir + "\"}";
        String[] env = {"CNI_COMMAND=" + command, "CNI_CONTAINERID=rehearsal" + pod, "CNI_NETNS=/var/run/netns/rehearsal",
            "CNI_IFNAME=eth0", "CNI_PATH=/rehearsal/bin", "JFLANNEL_CNI_DATA_DIR=" + dataDir};
        try (PipedInputStream toServer = new PipedInputStream(1 << 16);
             PipedOutputStream launcherOut = new PipedOutputStream(toServer);
             PipedInputStream toLauncher = new PipedInputStream(1 << 16);
             PipedOutputStream serverOut = new PipedOutputStream(toLauncher)) {
            Wire.Builder q = new Wire.Builder(Wire.REQUEST).u8(0).i32(env.length);
            for (String kv : env) {
                q.string(kv);
            }
            q.string(config);
            if (command.equals("DEL")) {
                q.u8(0).i32(0).bytes(scratch); // the scratch file as the launcher sends it
            } else {
                q.u8(1).i32(2).bytes(new byte[0]); // none yet
            }
            q.writeTo(launcherOut);
            int[] exit = {-1};
            Thread launcher = new Thread(() -> exit[0] = playLauncher(toLauncher, launcherOut), "cni-rehearsal-launcher");
            launcher.setDaemon(true);
            launcher.start();
            server.answer(toServer, serverOut, false);
            serverOut.close();
            launcher.join(10_000);
            return exit[0] == 0;
        } catch (IOException | UncheckedIOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The launcher's side: answers each step frame; returns the exit code of the result, -1 on anything else. */
    private int playLauncher(InputStream in, OutputStream out) {
        try {
            for (;;) {
                Wire.Frame f = Wire.read(in, Wire.MAX_REPLY);
                if (f.type() == Wire.ACCEPTED) {
                    continue;
                }
                if (f.type() == Wire.DONE) {
                    steps(f, null);
                    return f.u8();
                }
                if (f.type() != Wire.STEP) {
                    return -1;
                }
                Wire.Builder reply = new Wire.Builder(Wire.REPLY);
                steps(f, reply);
                reply.writeTo(out);
            }
        } catch (IOException | Wire.MalformedException e) {
            return -1;
        }
    }

    /** Performs a frame's steps in memory, all of them; the count and their replies into {@code reply} (null: the done frame's). */
    private void steps(Wire.Frame f, Wire.Builder reply) throws Wire.MalformedException {
        int n = f.u8();
        Wire.Builder r = reply != null ? reply.u8(n) : Wire.Builder.step(0);
        for (int i = 0; i < n; i++) {
            switch (f.u8()) {
                case Wire.FIND -> r.u8(1).string("/rehearsal/bin/" + f.string());
                case Wire.EXEC -> {
                    f.string();
                    String command = f.string();
                    f.bytes();
                    r.u8(0).i32(0).bytes(command.equals("ADD") ? BRIDGE_RESULT : new byte[0]).bytes(new byte[0]);
                }
                case Wire.WRITE_SCRATCH -> {
                    scratch = f.bytes();
                    r.i32(0).string("");
                }
                case Wire.READ_SCRATCH -> r.u8(0).i32(0).bytes(scratch);
                case Wire.REMOVE_SCRATCH -> r.i32(0);
                default -> throw new Wire.MalformedException("unknown step");
            }
        }
    }
}
