package org.jflannel.core;

/** A running watch; closing it stops the deliveries and the thread behind them. */
public interface Subscription extends AutoCloseable {
    @Override
    void close();
}
