package org.jflannel.subnet.kube;

/** What {@link NodeInformer} reports, already reduced to {@link NodeView}s; called on one thread at a time. */
interface NodeListener {
    void added(NodeView node);

    void updated(NodeView before, NodeView after);

    void deleted(NodeView last);

    /** Both listeners, {@code first} first, on the same thread. */
    static NodeListener both(NodeListener first, NodeListener second) {
        return new NodeListener() {
            @Override
            public void added(NodeView node) {
                first.added(node);
                second.added(node);
            }

            @Override
            public void updated(NodeView before, NodeView after) {
                first.updated(before, after);
                second.updated(before, after);
            }

            @Override
            public void deleted(NodeView last) {
                first.deleted(last);
                second.deleted(last);
            }
        };
    }
}
