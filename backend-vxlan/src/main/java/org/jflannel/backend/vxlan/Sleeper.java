package org.jflannel.backend.vxlan;

import java.time.Duration;

/** Waits between retries; injectable so tests run the retry logic without waiting. */
@FunctionalInterface
public interface Sleeper {
    Sleeper REAL = d -> Thread.sleep(d.toMillis());

    void sleep(Duration duration) throws InterruptedException;
}
