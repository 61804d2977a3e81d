package org.jflannel.netpol;

/** A policy direction: traffic into a selected pod, or out of it. */
public enum Direction {
    INGRESS, EGRESS
}
