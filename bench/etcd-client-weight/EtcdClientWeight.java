import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;

/** Ad-hoc (issue 19): the resident cost of an etcd client stack. "jetcd N": N jetcd clients (the daemon
 * opens 3), a prefix list of the leases and a prefix watch; "gateway": the same over etcd's v3 JSON gateway
 * (/v3/kv/range, /v3/watch) on java.net.http. Leases parsed with Jackson into a map either way. */
public class EtcdClientWeight {
    static final String PREFIX = "/coreos.com/network/subnets/";
    static final ObjectMapper M = new ObjectMapper();
    static final Map<String, JsonNode> LEASES = new HashMap<>();

    public static void main(String[] a) throws Exception {
        String ep = "http://127.0.0.1:2379";
        if (a[0].equals("none")) {
            M.readTree("{\"a\":1}");
        } else if (a[0].equals("jetcd")) {
            int n = Integer.parseInt(a[1]);
            Client[] cs = new Client[n];
            for (int i = 0; i < n; i++) cs[i] = Client.builder().endpoints(ep).build();
            ByteSequence p = ByteSequence.from(PREFIX, StandardCharsets.UTF_8);
            var r = cs[0].getKVClient().get(p, GetOption.builder().isPrefix(true).build()).get();
            for (KeyValue kv : r.getKvs()) LEASES.put(kv.getKey().toString(), M.readTree(kv.getValue().getBytes()));
            for (int i = 0; i < n; i++) {
                cs[i].getWatchClient().watch(p, WatchOption.builder().isPrefix(true).withRevision(r.getHeader().getRevision() + 1).build(),
                        (Watch.Listener) Watch.listener(w -> w.getEvents().forEach(e -> { })));
            }
        } else {
            HttpClient h = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            Base64.Encoder b = Base64.getEncoder();
            String key = b.encodeToString(PREFIX.getBytes()), end = b.encodeToString("/coreos.com/network/subnets0".getBytes());
            String body = "{\"key\":\"" + key + "\",\"range_end\":\"" + end + "\"}";
            HttpResponse<byte[]> r = h.send(HttpRequest.newBuilder(URI.create(ep + "/v3/kv/range")).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            JsonNode j = M.readTree(r.body());
            Base64.Decoder d = Base64.getDecoder();
            for (JsonNode kv : j.get("kvs")) LEASES.put(new String(d.decode(kv.get("key").asText())), M.readTree(d.decode(kv.get("value").asText())));
            long rev = j.get("header").get("revision").asLong() + 1;
            String wb = "{\"create_request\":{\"key\":\"" + key + "\",\"range_end\":\"" + end + "\",\"start_revision\":" + rev + "}}";
            HttpResponse<java.io.InputStream> w = h.send(HttpRequest.newBuilder(URI.create(ep + "/v3/watch")).POST(HttpRequest.BodyPublishers.ofString(wb)).build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            Thread t = new Thread(() -> {
                try (BufferedReader br = new BufferedReader(new InputStreamReader(w.body(), StandardCharsets.UTF_8))) {
                    for (String l; (l = br.readLine()) != null; ) M.readTree(l);
                } catch (Exception e) { System.err.println(e); }
            }, "watch");
            t.start();
        }
        System.out.println("ready leases=" + LEASES.size());
        Thread.sleep(Long.MAX_VALUE);
    }
}
