package org.jflannel.linuxnet.netlink;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import org.jflannel.linuxnet.NetlinkException;

/** The outcome of each request of an executed {@link Batch}, by the index its add method returned. */
public final class BatchResult {
    private final List<NetlinkException> errors;
    private final int failures;

    /** @param errors one element per request, null where the request succeeded */
    BatchResult(List<NetlinkException> errors) {
        this.errors = Collections.unmodifiableList(new ArrayList<>(errors));
        this.failures = (int) errors.stream().filter(e -> e != null).count();
    }

    public int size() {
        return errors.size();
    }

    public boolean ok(int index) {
        return errors.get(index) == null;
    }

    /** Request {@code index}'s failure, named like {@link RtNetlink}'s exceptions. */
    public Optional<NetlinkException> error(int index) {
        return Optional.ofNullable(errors.get(index));
    }

    /** Every failure, in request order. */
    public List<NetlinkException> errors() {
        List<NetlinkException> out = new ArrayList<>(failures);
        for (NetlinkException e : errors) {
            if (e != null) {
                out.add(e);
            }
        }
        return out;
    }

    public int failures() {
        return failures;
    }
}
