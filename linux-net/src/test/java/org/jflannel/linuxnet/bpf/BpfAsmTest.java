package org.jflannel.linuxnet.bpf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import org.jflannel.linuxnet.bpf.BpfAsm.Cond;
import org.jflannel.linuxnet.bpf.BpfAsm.Size;
import org.junit.jupiter.api.Test;

/** Encodings checked against the kernel's instruction format (include/uapi/linux/bpf.h), as llvm-objdump prints them. */
class BpfAsmTest {

    private static String hex(BpfAsm a) {
        return HexFormat.of().formatHex(a.build());
    }

    @Test
    void returnZero() {
        // r0 = 0; exit
        assertThat(hex(new BpfAsm().mov(BpfAsm.R0, 0).exit())).isEqualTo("b700000000000000" + "9500000000000000");
    }

    @Test
    void registersOffsetsAndImmediatesGoWhereTheKernelReadsThem() {
        BpfAsm a = new BpfAsm()
                .movReg(BpfAsm.R6, BpfAsm.R1)                  // bf 16 0000 00000000
                .load(Size.H, BpfAsm.R1, BpfAsm.FP, -42)       // 69 a1 d6ff 00000000
                .store(Size.W, BpfAsm.FP, -52, BpfAsm.R1)      // 63 1a ccff 00000000
                .storeImm(Size.W, BpfAsm.FP, -84, 0x00400000)  // 62 0a acff 00004000
                .and32(BpfAsm.R1, 0xffffff00)                   // 54 01 0000 00ffffff
                .toBe16(BpfAsm.R1)                              // dc 01 0000 10000000
                .atomicAdd64(BpfAsm.R0, 0, BpfAsm.R1)           // db 10 0000 00000000
                .call(BpfAsm.SKB_ADJUST_ROOM);                  // 85 00 0000 32000000
        assertThat(hex(a)).isEqualTo("bf16000000000000" + "69a1d6ff00000000" + "631accff00000000" + "620aacff00004000"
                + "5401000000ffffff" + "dc01000010000000" + "db10000000000000" + "8500000032000000");
    }

    @Test
    void aMapIsLoadedByDescriptorInTwoSlots() {
        // r1 = map fd 7 (BPF_PSEUDO_MAP_FD in src_reg), then the zero second half
        assertThat(hex(new BpfAsm().loadMapFd(BpfAsm.R1, 7))).isEqualTo("1811000007000000" + "0000000000000000");
    }

    @Test
    void jumpsReachTheirLabelsForwardAndBackward() {
        BpfAsm a = new BpfAsm()
                .label("top")
                .jump(Cond.NE, BpfAsm.R1, 0x45, "out")          // 0: +3 → 4
                .jump32(Cond.NE, BpfAsm.R1, 0xc0000201, "out")  // 1: +2 (32-bit compare, imm kept whole)
                .jumpReg(Cond.EQ, BpfAsm.R3, BpfAsm.R1, "top")  // 2: -3 → 0
                .jump("out")                                      // 3: +0
                .label("out")
                .mov(BpfAsm.R0, -1).exit();
        assertThat(hex(a)).isEqualTo("5501030045000000" + "56010200010200c0" + "1d13fdff00000000" + "0500000000000000"
                + "b7000000ffffffff" + "9500000000000000");
        assertThat(a.size()).isEqualTo(6);
    }

    @Test
    void anUndefinedOrDuplicateLabelIsRefused() {
        assertThatThrownBy(() -> new BpfAsm().jump("nowhere").exit().build()).hasMessageContaining("nowhere");
        assertThatThrownBy(() -> new BpfAsm().label("x").label("x")).hasMessageContaining("x");
    }

    @Test
    void registersAndOffsetsOutOfRangeAreRefused() {
        assertThatThrownBy(() -> new BpfAsm().mov(11, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new BpfAsm().load(Size.W, BpfAsm.R1, BpfAsm.FP, 40_000)).isInstanceOf(IllegalArgumentException.class);
    }
}
