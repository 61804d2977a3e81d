package org.jflannel.backend.wireguard.crypto;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What {@link AeadPaths} needs to know of the CPU and the JVM to tell whether the JDK's Poly1305
 * runs as a vector intrinsic: the CPU's flags ({@code /proc/cpuinfo}, empty when unreadable) and
 * HotSpot's {@code -XX:UseAVX} ({@code -1} when not known). HotSpot (JDK 25) applies its Poly1305
 * intrinsic only with AVX-512 IFMA ({@code avx512ifma} and {@code avx512vl}, which it keeps only at
 * {@code UseAVX=3}) or AVX-IFMA ({@code avx_ifma}, kept at {@code UseAVX>=2}); its own decision
 * ({@code UsePoly1305Intrinsics}) is a diagnostic flag that the management interface does not show,
 * so it is re-derived here from the same inputs.
 *
 * @param cpuFlags {@code /proc/cpuinfo}'s first {@code flags} line
 * @param useAvx HotSpot's {@code UseAVX}, or -1
 * @param useAvxSource where {@code useAvx} came from (for the log)
 */
record CpuFeatures(Set<String> cpuFlags, int useAvx, String useAvxSource) {
    private static final Pattern USE_AVX = Pattern.compile("-XX:UseAVX=(\\d+)");

    CpuFeatures {
        cpuFlags = Set.copyOf(cpuFlags);
        if (useAvx < -1) {
            throw new IllegalArgumentException("UseAVX: expected -1 (unknown) or 0.., got " + useAvx);
        }
    }

    /** Whether the JDK's Poly1305 runs as its IFMA intrinsic here; empty when the CPU's flags are unknown. */
    Optional<Boolean> poly1305Intrinsic() {
        if (cpuFlags.isEmpty()) {
            return Optional.empty();
        }
        boolean avx512Ifma = cpuFlags.contains("avx512ifma") && cpuFlags.contains("avx512vl") && (useAvx < 0 || useAvx >= 3);
        boolean avxIfma = cpuFlags.contains("avx_ifma") && (useAvx < 0 || useAvx >= 2);
        return Optional.of(avx512Ifma || avxIfma);
    }

    /** For the log: the IFMA flags present and the UseAVX value with its source. */
    String describe() {
        List<String> ifma = new ArrayList<>();
        for (String f : new String[] {"avx2", "avx512f", "avx512vl", "avx512ifma", "avx_ifma"}) {
            if (cpuFlags.contains(f)) {
                ifma.add(f);
            }
        }
        String avx = useAvx < 0 ? "unknown" : Integer.toString(useAvx);
        return "cpuFlags=" + (cpuFlags.isEmpty() ? "unknown" : String.join("+", ifma)) + " UseAVX=" + avx + " (" + useAvxSource + ")";
    }

    /** This host's and this JVM's. */
    static CpuFeatures detect() {
        Set<String> flags = Set.of();
        try {
            flags = cpuFlags(Files.readAllLines(Path.of("/proc/cpuinfo"), StandardCharsets.US_ASCII));
        } catch (IOException | RuntimeException e) {
            // not Linux, or no /proc: unknown, the JDK's engine stays the choice
        }
        Integer fromBean = useAvxFromManagement();
        if (fromBean != null) {
            return new CpuFeatures(flags, fromBean, "management");
        }
        // the image's runtime has no java.management: the flag as the JVM read it, from where it reads flags
        String args = String.join(" ", env("JAVA_TOOL_OPTIONS"), env("JDK_JAVA_OPTIONS"), commandLine(), env("_JAVA_OPTIONS"));
        int v = useAvxFrom(args);
        return new CpuFeatures(flags, v, v < 0 ? "default, not given" : "command line or options variables");
    }

    static Set<String> cpuFlags(List<String> cpuinfo) {
        for (String line : cpuinfo) {
            if (line.startsWith("flags")) {
                int colon = line.indexOf(':');
                return Set.copyOf(Arrays.asList(line.substring(colon + 1).trim().split("\\s+")));
            }
        }
        return Set.of();
    }

    /** The last {@code -XX:UseAVX=N} in {@code args} (HotSpot's rule: the last one wins), or -1. */
    static int useAvxFrom(String args) {
        Matcher m = USE_AVX.matcher(args);
        int v = -1;
        while (m.find()) {
            v = Integer.parseInt(m.group(1));
        }
        return v;
    }

    private static Integer useAvxFromManagement() {
        if (ModuleLayer.boot().findModule("jdk.management").isEmpty()) {
            return null;
        }
        try {
            var bean = ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
            return bean == null ? null : Integer.valueOf(bean.getVMOption("UseAVX").getValue());
        } catch (RuntimeException | LinkageError e) {
            return null; // not HotSpot, or not x86
        }
    }

    private static String env(String name) {
        String v = System.getenv(name);
        return v == null ? "" : v;
    }

    private static String commandLine() {
        try {
            return new String(Files.readAllBytes(Path.of("/proc/self/cmdline")), StandardCharsets.UTF_8).replace('\0', ' ');
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }
}
