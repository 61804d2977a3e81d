package org.jflannel.subnet.kube;

/** What {@link NodeInformer} reports, already reduced to {@link NodeView}s; called on one thread at a time. */
interface NodeListener {
    void added(NodeView node);

    void updated(NodeView before, NodeView after);

    void deleted(NodeView last);
}
