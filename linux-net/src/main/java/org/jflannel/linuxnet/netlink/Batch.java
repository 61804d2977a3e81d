package org.jflannel.linuxnet.netlink;

import static org.jflannel.linuxnet.netlink.Rtnl.*;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jflannel.linuxnet.NetlinkException;

/**
 * Many neighbour, FDB and route requests sent back to back (pipelined) instead of one round trip
 * each; from {@link RtNetlink#batch()}. Each request still gets its own ACK, so {@link #execute()}
 * reports every failure separately with operation, object, errno and the kernel's text. Requests are
 * sent in the order they were added; the kernel applies them in that order. Deletes are quiet when
 * the object is already gone, as {@link RtNetlink}'s are. Not thread-safe; build it on one thread.
 */
public final class Batch {
    private static final int CREATE_REPLACE = NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE;

    /** What one request does. */
    enum Kind {
        REPLACE_NEIGHBOUR, DELETE_NEIGHBOUR, REPLACE_FDB, DELETE_FDB, REPLACE_ROUTE, DELETE_ROUTE, REPLACE_NEXTHOP,
        DELETE_NEXTHOP
    }

    /** One request; {@code subject} is the Neighbour, FdbEntry, Route or Nexthop of its kind. */
    record Request(Kind kind, Object subject) implements NlChannel.Pipelined {
        Request {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(subject, "subject");
        }

        @Override
        public int type() {
            return switch (kind) {
                case REPLACE_NEIGHBOUR, REPLACE_FDB -> RTM_NEWNEIGH;
                case DELETE_NEIGHBOUR, DELETE_FDB -> RTM_DELNEIGH;
                case REPLACE_ROUTE -> RTM_NEWROUTE;
                case DELETE_ROUTE -> RTM_DELROUTE;
                case REPLACE_NEXTHOP -> RTM_NEWNEXTHOP;
                case DELETE_NEXTHOP -> RTM_DELNEXTHOP;
            };
        }

        @Override
        public int flags() {
            return deletes() ? NLM_F_ACK : CREATE_REPLACE;
        }

        boolean deletes() {
            return kind == Kind.DELETE_NEIGHBOUR || kind == Kind.DELETE_FDB || kind == Kind.DELETE_ROUTE
                    || kind == Kind.DELETE_NEXTHOP;
        }

        @Override
        public void encode(NlWriter w) {
            switch (kind) {
                case REPLACE_NEIGHBOUR, DELETE_NEIGHBOUR -> NeighCodec.neighbour(w, (Neighbour) subject);
                case REPLACE_FDB, DELETE_FDB -> NeighCodec.fdb(w, (FdbEntry) subject);
                case REPLACE_ROUTE -> RouteCodec.route(w, (Route) subject, false);
                case DELETE_ROUTE -> RouteCodec.route(w, (Route) subject, true);
                case REPLACE_NEXTHOP -> NexthopCodec.nexthop(w, (Nexthop) subject);
                case DELETE_NEXTHOP -> NexthopCodec.delete(w, ((Nexthop) subject).id());
            }
        }
    }

    private final RtNetlink owner;
    private final List<Request> requests = new ArrayList<>();

    Batch(RtNetlink owner) {
        this.owner = owner;
    }

    /** Adds {@code ip neigh replace}; returns the request's index in the result. */
    public int replaceNeighbour(Neighbour n) {
        return add(Kind.REPLACE_NEIGHBOUR, n);
    }

    public int deleteNeighbour(Neighbour n) {
        return add(Kind.DELETE_NEIGHBOUR, n);
    }

    /** Adds {@code bridge fdb replace ... self permanent}; returns the request's index in the result. */
    public int replaceFdb(FdbEntry e) {
        return add(Kind.REPLACE_FDB, e);
    }

    public int deleteFdb(FdbEntry e) {
        return add(Kind.DELETE_FDB, e);
    }

    /** Adds {@code ip route replace}; returns the request's index in the result. */
    public int replaceRoute(Route r) {
        return add(Kind.REPLACE_ROUTE, r);
    }

    public int deleteRoute(Route r) {
        return add(Kind.DELETE_ROUTE, r);
    }

    /** Adds {@code ip nexthop replace}; returns the request's index in the result. */
    public int replaceNexthop(Nexthop nh) {
        return add(Kind.REPLACE_NEXTHOP, nh);
    }

    /** Adds {@code ip nexthop del id}; quiet when it is gone. Routes through it go with it. */
    public int deleteNexthop(Nexthop nh) {
        return add(Kind.DELETE_NEXTHOP, nh);
    }

    public int size() {
        return requests.size();
    }

    /**
     * Sends every request and collects every answer. A kernel refusal of one request is in the
     * result and does not stop the others; a socket failure (send, receive) throws, and then the
     * state of the requests not yet answered is unknown. The batch may be executed again.
     */
    public BatchResult execute() throws NetlinkException {
        return owner.execute(List.copyOf(requests));
    }

    private int add(Kind kind, Object subject) {
        requests.add(new Request(kind, subject));
        return requests.size() - 1;
    }
}
