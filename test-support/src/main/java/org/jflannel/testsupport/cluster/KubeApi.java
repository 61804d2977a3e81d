package org.jflannel.testsupport.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jflannel.testsupport.kube.KubeconfigWriter;

/**
 * The harness's side of {@link KubeApiServerMain}: starts it as a process inside the fabric
 * namespace (port 6443 on the bridge address), writes the kubeconfig the nodes use, and sends it
 * commands over the pipe. Owns that process; {@link #close()} closes its stdin and ends it by PID.
 */
final class KubeApi implements AutoCloseable {
    static final int PORT = 6443;
    private static final ObjectMapper JSON = new ObjectMapper();
    /** A JVM's start (the stand-in is one) under the kernel VM's TCG takes tens of seconds: scaled as the harness's other bounds. */
    private static final long ANSWER_WITHIN_MS = Bounds.scaled(java.time.Duration.ofSeconds(60)).toMillis();

    private final ManagedProcess process;
    private final Writer commands;
    private final BlockingQueue<String> answers = new LinkedBlockingQueue<>();
    private final Path kubeconfig;

    private KubeApi(ManagedProcess process, Path kubeconfig) {
        this.process = process;
        this.kubeconfig = kubeconfig;
        this.commands = new OutputStreamWriter(process.process().getOutputStream(), StandardCharsets.UTF_8);
        Thread reader = new Thread(this::readAnswers, "kube-api-answers");
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts the server in {@code fabricNs} on the class path of this JVM; waits until it is ready. */
    static KubeApi start(String fabricNs, Path dir) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", fabricNs, java, "-Xmx128m",
                "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
        String logConfig = System.getProperty("logback.configurationFile");
        if (logConfig != null) {
            cmd.add("-Dlogback.configurationFile=" + logConfig);
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"),
                KubeApiServerMain.class.getName(), ClusterNames.fabricIp(), Integer.toString(PORT)));
        ManagedProcess p = ManagedProcess.startPiped("kube-api", cmd, Map.of(), dir.resolve("kube-api.log"));
        KubeApi api = new KubeApi(p, dir.resolve("kubeconfig"));
        try {
            String first = api.next();
            if (!first.startsWith("ready ")) {
                throw new IOException("mock API server did not start: " + first);
            }
            KubeconfigWriter.write(api.kubeconfig, first.substring("ready ".length()));
        } catch (Exception e) {
            api.close();
            throw e;
        }
        return api;
    }

    Path kubeconfig() {
        return kubeconfig;
    }

    ManagedProcess process() {
        return process;
    }

    JsonNode createNode(String name, String podCidr, String internalIp) throws IOException, InterruptedException {
        return JSON.readTree(ok(send("create-node " + name + " " + podCidr + " " + internalIp)));
    }

    /** Creates a whole Node given as JSON (one line), e.g. annotated exactly as upstream flannel writes them. */
    JsonNode createNodeJson(String nodeJson) throws IOException, InterruptedException {
        return JSON.readTree(ok(send("create-node-json " + JSON.readTree(nodeJson))));
    }

    /** The Node as the API server stores it now. */
    JsonNode getNode(String name) throws IOException, InterruptedException {
        return JSON.readTree(ok(send("get-node " + name)));
    }

    /** Every request the server received from others than the harness (flanneld), as JSON objects. */
    JsonNode calls() throws IOException, InterruptedException {
        return JSON.readTree(ok(send("calls")));
    }

    /** Creates any object given as JSON, or replaces it when one of that kind, namespace and name exists. */
    JsonNode applyJson(String objectJson) throws IOException, InterruptedException {
        return JSON.readTree(ok(send("apply-json " + JSON.readTree(objectJson))));
    }

    /** Deletes the object of the JSON's kind, namespace and name. */
    void deleteJson(String objectJson) throws IOException, InterruptedException {
        ok(send("delete-json " + JSON.readTree(objectJson)));
    }

    void deleteNode(String name) throws IOException, InterruptedException {
        ok(send("delete-node " + name));
    }

    /** A strategic merge patch of the Node ({@code null} values delete keys); returns the Node after it. */
    JsonNode patchNode(String name, String patchJson) throws IOException, InterruptedException {
        return JSON.readTree(ok(send("patch-node " + name + " " + JSON.readTree(patchJson))));
    }

    /** One of the server's fault commands: stop-serving, resume-serving, hold-watches, release-watches, expire-watches. */
    void fault(String command) throws IOException, InterruptedException {
        if (!List.of("stop-serving", "resume-serving", "hold-watches", "release-watches", "expire-watches").contains(command)) {
            throw new IllegalArgumentException("fault: unknown command \"" + command + "\"");
        }
        ok(send(command));
    }

    private synchronized String send(String line) throws IOException, InterruptedException {
        commands.write(line + "\n");
        commands.flush();
        return next();
    }

    private String next() throws IOException, InterruptedException {
        String answer = answers.poll(ANSWER_WITHIN_MS, TimeUnit.MILLISECONDS);
        if (answer == null) {
            throw new IOException("no answer from the mock API server within " + ANSWER_WITHIN_MS
                    + " ms (alive=" + process.isAlive() + "); log: " + process.logTail(20));
        }
        return answer;
    }

    private static String ok(String answer) throws IOException {
        if (answer.equals("ok")) {
            return "";
        }
        if (answer.startsWith("ok ")) {
            return answer.substring(3);
        }
        throw new IOException("mock API server: " + answer);
    }

    private void readAnswers() {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.process().getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                if (line.equals("ok") || line.startsWith("ok ") || line.startsWith("err ") || line.startsWith("ready ")) {
                    answers.add(line);
                } else { // the server's own log lines on stdout (a library's, say) are no answers: kept apart
                    System.out.println("kube-api log: " + line);
                }
            }
        } catch (IOException e) {
            answers.add("err pipe closed: " + e.getMessage());
        }
        answers.add("err mock API server exited");
    }

    @Override
    public void close() throws InterruptedException {
        try {
            commands.close();
        } catch (IOException alreadyGone) {
            // the process ended already; the kill below is then a no-op
        }
        if (process.awaitExit(java.time.Duration.ofSeconds(5)).isEmpty()) {
            process.kill();
        }
    }
}
