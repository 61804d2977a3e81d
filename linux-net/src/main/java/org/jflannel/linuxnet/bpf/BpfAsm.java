package org.jflannel.linuxnet.bpf;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A small eBPF assembler: the instructions our tc programs use, with named labels for forward
 * jumps, encoded as the kernel reads them ({@code struct bpf_insn}, 8 bytes, little-endian on the
 * hosts we run on). Registers are numbers: R0 result, R1–R5 arguments (clobbered by calls), R6–R9
 * callee-saved, R10 the read-only frame pointer. Methods return {@code this}, so a program reads
 * top to bottom.
 */
public final class BpfAsm {
    public static final int INSN_SIZE = 8;
    public static final int R0 = 0;
    public static final int R1 = 1;
    public static final int R2 = 2;
    public static final int R3 = 3;
    public static final int R4 = 4;
    public static final int R5 = 5;
    public static final int R6 = 6;
    public static final int R7 = 7;
    public static final int R8 = 8;
    public static final int R9 = 9;
    public static final int FP = 10;

    /** Helper function numbers ({@code enum bpf_func_id}). */
    public static final int MAP_LOOKUP_ELEM = 1;
    public static final int KTIME_GET_NS = 5;
    public static final int SKB_STORE_BYTES = 9;
    public static final int L3_CSUM_REPLACE = 10;
    public static final int REDIRECT = 23;
    public static final int SKB_LOAD_BYTES = 26;
    public static final int CSUM_DIFF = 28;
    public static final int SKB_CHANGE_HEAD = 43;
    public static final int SKB_ADJUST_ROOM = 50;
    public static final int REDIRECT_NEIGH = 152;

    /** Memory access sizes. */
    public enum Size {
        W(0x00, 4), H(0x08, 2), B(0x10, 1), DW(0x18, 8);

        final int code;
        final int bytes;

        Size(int code, int bytes) {
            this.code = code;
            this.bytes = bytes;
        }
    }

    /** Conditional jumps (unsigned comparisons). */
    public enum Cond {
        EQ(0x10), GT(0x20), GE(0x30), NE(0x50), LT(0xa0), LE(0xb0);

        final int code;

        Cond(int code) {
            this.code = code;
        }
    }

    private static final int CLASS_LD = 0x00;
    private static final int CLASS_LDX = 0x01;
    private static final int CLASS_ST = 0x02;
    private static final int CLASS_STX = 0x03;
    private static final int CLASS_ALU = 0x04;
    private static final int CLASS_JMP = 0x05;
    private static final int CLASS_JMP32 = 0x06;
    private static final int CLASS_ALU64 = 0x07;
    private static final int SRC_X = 0x08;
    private static final int MODE_IMM = 0x00;
    private static final int MODE_MEM = 0x60;
    private static final int MODE_ATOMIC = 0xc0;
    private static final int OP_ADD = 0x00;
    private static final int OP_SUB = 0x10;
    private static final int OP_OR = 0x40;
    private static final int OP_AND = 0x50;
    private static final int OP_LSH = 0x60;
    private static final int OP_RSH = 0x70;
    private static final int OP_XOR = 0xa0;
    private static final int OP_MOV = 0xb0;
    private static final int OP_END = 0xd0;
    private static final int TO_BE = 0x08;
    private static final int JA = 0x00;
    private static final int CALL = 0x80;
    private static final int EXIT = 0x90;
    private static final int PSEUDO_MAP_FD = 1;

    private record Insn(int code, int dst, int src, int off, int imm) {
    }

    private final List<Insn> insns = new ArrayList<>();
    private final Map<String, Integer> labels = new HashMap<>();
    /** Instruction index → label its offset must reach. */
    private final Map<Integer, String> fixups = new HashMap<>();

    private BpfAsm emit(int code, int dst, int src, int off, int imm) {
        if (dst < 0 || dst > FP || src < 0 || src > FP) {
            throw new IllegalArgumentException("bpf register out of range: dst=" + dst + " src=" + src);
        }
        if (off < Short.MIN_VALUE || off > Short.MAX_VALUE) {
            throw new IllegalArgumentException("bpf offset out of range: " + off);
        }
        insns.add(new Insn(code, dst, src, off, imm));
        return this;
    }

    /** {@code dst = imm} (64-bit, sign-extended). */
    public BpfAsm mov(int dst, int imm) {
        return emit(CLASS_ALU64 | OP_MOV, dst, 0, 0, imm);
    }

    /** {@code dst = src}. */
    public BpfAsm movReg(int dst, int src) {
        return emit(CLASS_ALU64 | OP_MOV | SRC_X, dst, src, 0, 0);
    }

    public BpfAsm add(int dst, int imm) {
        return emit(CLASS_ALU64 | OP_ADD, dst, 0, 0, imm);
    }

    public BpfAsm addReg(int dst, int src) {
        return emit(CLASS_ALU64 | OP_ADD | SRC_X, dst, src, 0, 0);
    }

    public BpfAsm subReg(int dst, int src) {
        return emit(CLASS_ALU64 | OP_SUB | SRC_X, dst, src, 0, 0);
    }

    public BpfAsm and(int dst, int imm) {
        return emit(CLASS_ALU64 | OP_AND, dst, 0, 0, imm);
    }

    public BpfAsm andReg(int dst, int src) {
        return emit(CLASS_ALU64 | OP_AND | SRC_X, dst, src, 0, 0);
    }

    /** {@code dst = (u32) dst & imm}: the 32-bit form, for masks whose top bit is set. */
    public BpfAsm and32(int dst, int imm) {
        return emit(CLASS_ALU | OP_AND, dst, 0, 0, imm);
    }

    public BpfAsm or(int dst, int imm) {
        return emit(CLASS_ALU64 | OP_OR, dst, 0, 0, imm);
    }

    public BpfAsm xor(int dst, int imm) {
        return emit(CLASS_ALU64 | OP_XOR, dst, 0, 0, imm);
    }

    public BpfAsm lsh(int dst, int imm) {
        return emit(CLASS_ALU64 | OP_LSH, dst, 0, 0, imm);
    }

    public BpfAsm rsh(int dst, int imm) {
        return emit(CLASS_ALU64 | OP_RSH, dst, 0, 0, imm);
    }

    /** Swaps the low 16 bits to network order and clears the rest ({@code be16}). */
    public BpfAsm toBe16(int dst) {
        return emit(CLASS_ALU | OP_END | TO_BE, dst, 0, 0, 16);
    }

    /** {@code dst = *(size *)(src + off)}. */
    public BpfAsm load(Size size, int dst, int src, int off) {
        return emit(CLASS_LDX | MODE_MEM | size.code, dst, src, off, 0);
    }

    /** {@code *(size *)(dst + off) = src}. */
    public BpfAsm store(Size size, int dst, int off, int src) {
        return emit(CLASS_STX | MODE_MEM | size.code, dst, src, off, 0);
    }

    /** {@code *(size *)(dst + off) = imm}. */
    public BpfAsm storeImm(Size size, int dst, int off, int imm) {
        return emit(CLASS_ST | MODE_MEM | size.code, dst, 0, off, imm);
    }

    /** {@code lock *(u64 *)(dst + off) += src}. */
    public BpfAsm atomicAdd64(int dst, int off, int src) {
        return emit(CLASS_STX | MODE_ATOMIC | Size.DW.code, dst, src, off, OP_ADD);
    }

    /** {@code dst = map} (the two-slot load of a map by descriptor). */
    public BpfAsm loadMap(int dst, BpfMap map) {
        return loadMapFd(dst, map.fd());
    }

    BpfAsm loadMapFd(int dst, int fd) {
        emit(CLASS_LD | MODE_IMM | Size.DW.code, dst, PSEUDO_MAP_FD, 0, fd);
        return emit(0, 0, 0, 0, 0);
    }

    /** {@code if (dst cond imm) goto label}, 64-bit compare with imm sign-extended. */
    public BpfAsm jump(Cond cond, int dst, int imm, String label) {
        fixups.put(insns.size(), label);
        return emit(CLASS_JMP | cond.code, dst, 0, 0, imm);
    }

    /** {@code if ((u32) dst cond (u32) imm) goto label}: for addresses and other 32-bit words. */
    public BpfAsm jump32(Cond cond, int dst, int imm, String label) {
        fixups.put(insns.size(), label);
        return emit(CLASS_JMP32 | cond.code, dst, 0, 0, imm);
    }

    /** {@code if (dst cond src) goto label}. */
    public BpfAsm jumpReg(Cond cond, int dst, int src, String label) {
        fixups.put(insns.size(), label);
        return emit(CLASS_JMP | cond.code | SRC_X, dst, src, 0, 0);
    }

    public BpfAsm jump(String label) {
        fixups.put(insns.size(), label);
        return emit(CLASS_JMP | JA, 0, 0, 0, 0);
    }

    /** Calls helper {@code id}: arguments in R1–R5, result in R0, R1–R5 clobbered. */
    public BpfAsm call(int id) {
        return emit(CLASS_JMP | CALL, 0, 0, 0, id);
    }

    public BpfAsm exit() {
        return emit(CLASS_JMP | EXIT, 0, 0, 0, 0);
    }

    /** Marks the next instruction as {@code name}. */
    public BpfAsm label(String name) {
        if (labels.putIfAbsent(name, insns.size()) != null) {
            throw new IllegalStateException("bpf label defined twice: " + name);
        }
        return this;
    }

    /** Number of instructions so far (a 64-bit load counts two). */
    public int size() {
        return insns.size();
    }

    /** The encoded program; every label used must be defined. */
    public byte[] build() {
        ByteBuffer out = ByteBuffer.allocate(insns.size() * INSN_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < insns.size(); i++) {
            Insn in = insns.get(i);
            int off = in.off();
            String target = fixups.get(i);
            if (target != null) {
                Integer at = labels.get(target);
                if (at == null) {
                    throw new IllegalStateException("bpf label used but not defined: " + target);
                }
                off = at - i - 1;
            }
            out.put((byte) in.code()).put((byte) (in.dst() | in.src() << 4)).putShort((short) off).putInt(in.imm());
        }
        return out.array();
    }
}
