/**
 * eBPF through bpf(2): {@link org.jflannel.linuxnet.bpf.BpfAsm}, a small assembler for the tc
 * programs the udp backend's kernel datapath uses, {@link org.jflannel.linuxnet.bpf.BpfProgram} (load
 * and verify a {@code SCHED_CLS} program), {@link org.jflannel.linuxnet.bpf.BpfMap} (maps read and
 * written by key and value bytes) and {@link org.jflannel.linuxnet.bpf.BpfLink} (a program attached to
 * a device's tcx hook until closed).
 */
package org.jflannel.linuxnet.bpf;
