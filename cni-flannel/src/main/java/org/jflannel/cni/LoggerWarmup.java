package org.jflannel.cni;

/**
 * Starts the JDK's system-logger lookup on a background thread while the plugin reads its input.
 * Since JDK 24 every {@code ProcessBuilder.start} asks the logger "java.lang.ProcessBuilder" whether
 * it logs; the first ask finds the logger backend (two service lookups over the module image and the
 * class path, the jars opened for them): ≈ 4 ms of the main thread per ADD or DEL, before the
 * delegate's result can be read. Started first thing, that work runs beside the input parsing and
 * the scratch file's fsync, and {@code start} then finds the backend ready (the lookup is
 * synchronized in the JDK, so the main thread waits for it rather than repeating it).
 * Only for commands that run a delegate.
 */
final class LoggerWarmup extends Thread {

    private LoggerWarmup() {
        super("logger-warmup");
        setDaemon(true); // the plugin halts when done; nothing waits for this thread
    }

    /** Starts the lookup if {@code command} runs a delegate (ADD, DEL, CHECK, GC) on a JDK that logs process starts. */
    static void startFor(String command) {
        if (Runtime.version().feature() < 24) {
            return; // bin/flannel on JDK 17: its ProcessBuilder asks no logger
        }
        switch (command) {
            case "ADD", "DEL", "CHECK", "GC" -> new LoggerWarmup().start();
            default -> {
            }
        }
    }

    @Override
    public void run() {
        System.getLogger("java.lang.ProcessBuilder").isLoggable(System.Logger.Level.DEBUG);
    }
}
