package org.jflannel.linuxnet.socket;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.jflannel.linuxnet.internal.LibC;
import org.jflannel.linuxnet.tun.TunDevice;

/**
 * A reusable scatter/gather list (struct iovec[]) over ranges of direct buffers, for
 * {@link TunDevice#writev} and {@link UdpBatchSocket#send}: a packet assembled from pieces of
 * several buffers leaves in one system call without being copied together first. Not thread-safe;
 * one per thread. The native addresses of the few buffers a packet path uses are looked up once and
 * cached, so {@link #add} allocates nothing.
 */
public final class IoVec {
    static final int IOVEC_BYTES = 16;
    private static final int CACHE = 8;

    private final ByteBuffer mem;
    private final long memAddress;
    private final int capacity;
    private final ByteBuffer[] buffers;
    private final int[] offsets;
    private final int[] lengths;
    private final ByteBuffer[] cachedBuffers = new ByteBuffer[CACHE];
    private final long[] cachedAddresses = new long[CACHE];
    private int cacheNext;
    private int count;
    private long bytes;

    /** Room for {@code capacity} pieces (the kernel accepts at most 1024 per call). */
    public IoVec(int capacity) {
        if (capacity < 1 || capacity > 1024) {
            throw new IllegalArgumentException("iovec capacity: expected 1..1024, got " + capacity);
        }
        this.capacity = capacity;
        this.mem = ByteBuffer.allocateDirect(capacity * IOVEC_BYTES).order(ByteOrder.nativeOrder());
        this.memAddress = LibC.address(mem);
        this.buffers = new ByteBuffer[capacity];
        this.offsets = new int[capacity];
        this.lengths = new int[capacity];
    }

    /** Forgets all pieces. */
    public IoVec clear() {
        count = 0;
        bytes = 0;
        return this;
    }

    /** Appends {@code length} bytes of {@code direct} from absolute index {@code offset}. */
    public IoVec add(ByteBuffer direct, int offset, int length) {
        if (count == capacity) {
            throw new IllegalStateException("iovec full: " + capacity + " pieces");
        }
        if (offset < 0 || length < 0 || offset + length > direct.capacity()) {
            throw new IndexOutOfBoundsException("iovec piece [" + offset + ", +" + length + ") of a buffer of " + direct.capacity());
        }
        int at = count * IOVEC_BYTES;
        mem.putLong(at, address(direct) + offset);
        mem.putLong(at + 8, length);
        buffers[count] = direct;
        offsets[count] = offset;
        lengths[count] = length;
        count++;
        bytes += length;
        return this;
    }

    public int count() {
        return count;
    }

    /** Total bytes of all pieces. */
    public long bytes() {
        return bytes;
    }

    public int capacity() {
        return capacity;
    }

    /** Bytes of pieces {@code [from, from + n)}. */
    public long bytes(int from, int n) {
        long sum = 0;
        for (int i = from; i < from + n; i++) {
            sum += lengths[i];
        }
        return sum;
    }

    /** Copies all pieces, in order, into {@code out} at its position (for tests and slow paths). */
    public void gather(ByteBuffer out) {
        gather(0, count, out);
    }

    /** Copies pieces {@code [from, from + n)}, in order, into {@code out} at its position. */
    public void gather(int from, int n, ByteBuffer out) {
        for (int i = from; i < from + n; i++) {
            out.put(out.position(), buffers[i], offsets[i], lengths[i]);
            out.position(out.position() + lengths[i]);
        }
    }

    /**
     * The native address of piece {@code index} within the iovec array; public for the TUN device's
     * {@code writev} in the {@code tun} package, not for callers outside linux-net.
     */
    public long address(int index) {
        return memAddress + (long) index * IOVEC_BYTES;
    }

    private long address(ByteBuffer direct) {
        for (int i = 0; i < CACHE; i++) {
            if (cachedBuffers[i] == direct) {
                return cachedAddresses[i];
            }
        }
        long a = LibC.address(direct);
        cachedBuffers[cacheNext] = direct;
        cachedAddresses[cacheNext] = a;
        cacheNext = (cacheNext + 1) % CACHE;
        return a;
    }
}
