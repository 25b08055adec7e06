package io.cairn.objectstore;

class InMemoryObjectStoreTest extends AbstractObjectStoreContractTest {
  @Override
  protected ObjectStore newStore() {
    return new InMemoryObjectStore();
  }
}
