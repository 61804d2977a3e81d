package org.jflannel.cni;

/** The executable: {@code /opt/cni/bin/flannel}. All work happens in {@link FlannelPlugin}. */
public final class Main {

    private Main() {
    }

    public static void main(String[] args) {
        System.exit(new FlannelPlugin(System.getenv(), System.in, System.out, System.err).run());
    }
}
