package org.jflannel.cni;

/** One CNI command (ADD, DEL, CHECK, GC, STATUS): the plugin's part after skel's checks. */
@FunctionalInterface
interface Command {
    void run(Invocation inv) throws CniException;
}
