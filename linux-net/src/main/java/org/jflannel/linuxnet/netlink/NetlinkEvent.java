package org.jflannel.linuxnet.netlink;

/** A change the kernel announced on a subscribed rtnetlink group. */
public sealed interface NetlinkEvent permits NetlinkEvent.LinkEvent, NetlinkEvent.AddressEvent,
        NetlinkEvent.RouteEvent, NetlinkEvent.NeighbourEvent, NetlinkEvent.FdbEvent {

    /** True for RTM_DEL*, false for RTM_NEW*. */
    boolean deleted();

    record LinkEvent(Link link, boolean deleted) implements NetlinkEvent {
    }

    record AddressEvent(Address address, boolean deleted) implements NetlinkEvent {
    }

    record RouteEvent(Route route, boolean deleted) implements NetlinkEvent {
    }

    record NeighbourEvent(Neighbour neighbour, boolean deleted) implements NetlinkEvent {
    }

    record FdbEvent(FdbEntry entry, boolean deleted) implements NetlinkEvent {
    }
}
