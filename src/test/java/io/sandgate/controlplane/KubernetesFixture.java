package io.sandgate.controlplane;

import io.sandgate.core.Schedulers;
import io.sandgate.store.Store;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.KubernetesApiDouble;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * A Kubernetes API server test double and the parts a pod watcher on it needs, fresh for each test;
 * the test builds the store and the watcher, and all of it is closed in order after it.
 */
abstract class KubernetesFixture
{
    protected KubernetesApiDouble kubernetes;
    protected Schedulers schedulers;
    protected Store store;
    protected PodWatcher watcher;

    @BeforeEach
    final void startApi()
    {
        kubernetes = KubernetesApiDouble.start();
        schedulers = Schedulers.create();
    }

    @AfterEach
    final void stopFixture() throws Exception
    {
        Fixtures.closeInOrder(watcher, store, schedulers, kubernetes);
    }
}
