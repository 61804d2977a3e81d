package org.jflannel.cni;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.Map;

/**
 * The build's training run for the class-data archive (the image's AOT cache, bin/flannel's AppCDS
 * archive): every command once, in-process, against a throwaway directory with a fake delegate, so
 * the archive holds the classes a real ADD or DEL loads (JSON, subnet.env, scratch files, process
 * start, result printing, errors). Prints nothing on stdout.
 *
 * <p>Written to load nothing a real call does not: an AOT cache loads and links every class it holds
 * at each start, so a class only the training used is paid for by every pod. Hence no
 * {@code Files.createTempDirectory} (SecureRandom and the security providers, 50 classes), no streams
 * or lambdas, no {@code String.format} (Formatter, regex), and no "about" text (the jar's resources).
 */
public final class CdsTraining {

    private CdsTraining() {
    }

    public static void main(String[] args) throws IOException, ClassNotFoundException {
        Class.forName("org.jflannel.cni.Main"); // the real entry point belongs in the archive too
        Map.copyOf(System.getenv()); // as Main does: the environment map's classes too
        LoggerWarmup.startFor("ADD"); // its class and the logger backend's, as Main starts them
        // three JDK classes a real call loads (in the logger lookup) that the training's own run does not reach:
        // from the modules file, each costs every call a lookup and a parse
        new HashMap<String, String>().values().iterator();
        java.util.Arrays.spliterator(new Object[0]);
        Path dir = Path.of(System.getProperty("java.io.tmpdir"), "flannel-cds-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
        Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        try {
            train(dir);
        } finally {
            delete(dir);
        }
    }

    private static void delete(Path p) throws IOException {
        if (Files.isDirectory(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(p)) {
                for (Path child : ds) {
                    delete(child);
                }
            }
        }
        Files.deleteIfExists(p);
    }

    private static void train(Path dir) throws IOException {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Path bridge = bin.resolve("bridge");
        Files.writeString(bridge, "#!/bin/sh\ncat >/dev/null\n[ \"$CNI_COMMAND\" = ADD ] && echo '{\"cniVersion\":\"0.3.1\","
            + "\"interfaces\":[{\"name\":\"eth0\",\"mac\":\"d6:bb:00:00:00:01\",\"sandbox\":\"/run/netns/x\"}],\"ips\":[{\"version\":\"4\","
            + "\"interface\":0,\"address\":\"10.244.1.2/24\",\"gateway\":\"10.244.1.1\"}],\"routes\":[{\"dst\":\"10.244.0.0/16\"}],\"dns\":{}}'\n"
            + "exit 0\n");
        Files.setPosixFilePermissions(bridge, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path subnetEnv = dir.resolve("subnet.env");
        Files.writeString(subnetEnv, "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_IPV6_NETWORK=fc00::/48\n"
            + "FLANNEL_IPV6_SUBNET=fc00::1/64\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n");
        String conf = "{\"cniVersion\":\"@V@\",\"name\":\"cbr0\",\"type\":\"flannel\",\"delegate\":{\"hairpinMode\":true,"
            + "\"isDefaultGateway\":true},\"ipam\":{\"routes\":[{\"dst\":\"10.96.0.0/12\",\"mtu\":1400}]},\"runtimeConfig\":{\"x\":1.5},"
            + "\"subnetFile\":\"" + subnetEnv + "\",\"dataDir\":\"" + dir.resolve("data") + "\"}";
        Map<String, String> env = new HashMap<>();
        env.put("CNI_CONTAINERID", "training");
        env.put("CNI_NETNS", dir.resolve("no-netns").toString());
        env.put("CNI_IFNAME", "eth0");
        env.put("CNI_PATH", bin.toString());
        for (String version : new String[] {"0.3.1", "1.0.0", "1.1.0"}) {
            String c = conf.replace("@V@", version);
            run(env, "ADD", c);
            run(env, "CHECK", c);
            run(env, "DEL", c);
            run(env, "DEL", c);
            run(env, "STATUS", c);
            run(env, "GC", c.replace("\"name\"", "\"cni.dev/valid-attachments\":[],\"name\""));
        }
        run(env, "VERSION", "");
        run(env, "ADD", "{\"name\":\"x\",\"cniVersion\":\"9\"}");
        run(env, "ADD", "{\"name\":");
        run(env, "ADD", conf.replace("@V@", "0.3.1").replace(subnetEnv.toString(), dir.resolve("missing").toString()));
    }

    private static void run(Map<String, String> base, String command, String stdin) {
        Map<String, String> env = new HashMap<>(base);
        env.put("CNI_COMMAND", command);
        PrintStream sink = new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8);
        new FlannelPlugin(env, new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)), sink, sink).run();
    }
}
