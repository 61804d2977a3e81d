package org.jflannel.linuxnet.tun;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TunIfreqTest {

    @Test
    void tunIfreqCarriesNameAndFlags() {
        byte[] ifr = TunDevice.ifreq("flannel%d", TunDevice.IFF_TUN | TunDevice.IFF_NO_PI);
        assertThat(ifr).hasSize(40);
        assertThat(TunDevice.nameOf(ifr)).isEqualTo("flannel%d");
        assertThat(ifr[16]).isEqualTo((byte) 0x01);
        assertThat(ifr[17]).isEqualTo((byte) 0x10);
    }

}
